// Two small helpers of the wire, kept below every layer that needs them: the server and the
// dashboard read bearer tokens, accounts mint keys, and the dialects' surfaces do both without
// importing the server.

import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Unbiased base62: bytes ≥ 248 are rejected so every character is equally likely. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
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
