// Two small helpers of the wire, kept below every layer that needs them: the server and the
// dashboard read bearer tokens, accounts mint keys, and the dialects' surfaces do both without
// importing the server.

import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const CODES = Buffer.from(BASE62, 'latin1');

// Random bytes drawn a few kilobytes at a time, as crypto.randomUUID draws its own: one
// randomBytes call per id (every translated answer's, every Responses answer's) cost a crossing
// into OpenSSL each time. The bytes are the CSPRNG's all the same, and each is used once.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let pooled = 0;

function randomByte(): number {
  if (pooled === pool.length) {
    pool = randomBytes(POOL_BYTES);
    pooled = 0;
  }
  return pool[pooled++]!;
}

/**
 * Unbiased base62: bytes ≥ 248 are rejected so every character is equally likely. Written into
 * a buffer and read as one flat string: built a character at a time, the string was a rope of
 * as many pieces.
 */
export function randomBase62(length: number): string {
  const out = Buffer.allocUnsafe(length);
  for (let i = 0; i < length;) {
    const b = randomByte();
    if (b < 248) out[i++] = CODES[b % 62]!;
  }
  return out.toString('latin1');
}

/** Base62 of given bytes (one character each, bytes ≥ 248 skipped as randomBase62 skips them); length characters, or fewer when the bytes run out. */
export function base62Of(bytes: Uint8Array, length: number): string {
  const out: number[] = [];
  for (let i = 0; i < bytes.length && out.length < length; i++) if (bytes[i]! < 248) out.push(CODES[bytes[i]! % 62]!);
  return Buffer.from(out).toString('latin1');
}

export const bearer = (header: string | undefined): string | undefined => {
  if (!header) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(header.trim());
  return m ? m[1].trim() : undefined;
};

/** A path segment unescaped; a malformed escape stays as it came (it names nothing, and is answered as such). */
export function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
