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

let claimedAt = 0;

/** Room for `room` bytes: the slab from claimedAt (`length` of them taken), or a buffer of its own. */
function claim(room: number, length: number): Buffer {
  if (room > MAX_PIECE || used + room > SLAB_BYTES) {
    claimedAt = 0;
    return Buffer.allocUnsafeSlow(room);
  }
  claimedAt = used;
  used += length;
  return slab;
}

/** The piece of `out` (claim()'s) that holds the result. */
const piece = (out: Buffer, length: number, room: number) =>
  out === slab ? slab.subarray(claimedAt, claimedAt + length) : length === room ? out : out.subarray(0, length);

/**
 * `raw` with bytes [start, end) replaced by `value`, valid until the next releaseScratch(): the
 * pieces handed out between two releases never overlap (past the slab's end they are buffers of
 * their own).
 * The whole of `raw` is copied in one memcpy and its tail moved into place with copyWithin:
 * two native copies, no view of a part of `raw`, and no loop over its bytes in JS, which for a
 * chunk of a few hundred bytes cost four times as much. Only the value (a model's name) is
 * copied byte by byte.
 */
export function spliced(raw: Buffer, start: number, end: number, value: Buffer): Buffer {
  const length = raw.length - (end - start) + value.length;
  // Room for all of `raw` first, when the result is the shorter of the two.
  const room = Math.max(length, raw.length);
  const out = claim(room, length);
  const at = claimedAt;
  out.set(raw, at);
  out.copyWithin(at + start + value.length, at + end, at + raw.length);
  for (let i = 0; i < value.length; i++) out[at + start + i] = value[i]!;
  return piece(out, length, room);
}

/**
 * Copies bytes [start, end) of `src` into `dst` at `at`; returns where they end. A token is a
 * few bytes: copied here, where a copy call would cross into C++.
 */
export function copyBytes(src: Buffer, start: number, end: number, dst: Buffer, at: number): number {
  if (end - start > 64) return at + src.copy(dst, at, start, end);
  for (let i = start; i < end; i++) dst[at++] = src[i]!;
  return at;
}

/**
 * `head`, bytes [start, end) of `raw`, then `tail`, valid until the next releaseScratch(): a
 * translated text delta, the upstream's text between the client's framing (stream/text-lane.ts).
 */
export function framed(head: Buffer, raw: Buffer, start: number, end: number, tail: Buffer): Buffer {
  const length = head.length + end - start + tail.length;
  const out = claim(length, length);
  const at = claimedAt;
  out.set(head, at);
  out.set(tail, copyBytes(raw, start, end, out, at + head.length));
  return piece(out, length, length);
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
