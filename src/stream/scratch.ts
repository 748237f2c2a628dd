// Bytes that live only until the client writer's next flush: a pass-through chunk whose model is
// renamed (every OpenAI chunk names it) is written to the client within the same upstream read,
// and uWS copies what it is given. A buffer of its own per chunk cost a malloc, an ArrayBuffer
// for the collector to track and free, and about a microsecond a token; a slice of the shared
// pool kept whole pool chunks alive and held 10,000 streams' RSS up by tens of MB. One slab per
// process, handed out front to back and taken back whole at each flush, costs neither.

const SLAB_BYTES = 256 * 1024;
/** A piece larger than this (a long tool call's event) gets a buffer of its own. */
const MAX_PIECE = 32 * 1024;

const slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
let used = 0;

/**
 * `length` bytes to fill, valid until the next releaseScratch(). Pieces handed out between two
 * releases never overlap: past the slab's end they are buffers of their own.
 */
export function scratch(length: number): Buffer {
  if (length > MAX_PIECE || used + length > SLAB_BYTES) return Buffer.allocUnsafeSlow(length);
  const piece = slab.subarray(used, used + length);
  used += length;
  return piece;
}

/** Every scratch piece handed out so far has been written (the client writer's flush). */
export function releaseScratch(): void {
  used = 0;
}

/** `buf` itself, or a copy of it if it is a scratch piece: for bytes kept past the flush. */
export function kept(buf: Buffer): Buffer {
  if (buf.buffer !== slab.buffer) return buf;
  const copy = Buffer.allocUnsafeSlow(buf.length);
  buf.copy(copy);
  return copy;
}
