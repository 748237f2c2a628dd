// Comparing a signature that arrived with the one computed here, in constant time.

import { timingSafeEqual } from 'node:crypto';

/** True when `given` is the hex digest `expected` (any letter case). */
export function sameHex(expected: string, given: unknown): boolean {
  if (typeof given !== 'string' || given.length !== expected.length || !/^[0-9a-fA-F]+$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(expected.toLowerCase()), Buffer.from(given.toLowerCase()));
}
