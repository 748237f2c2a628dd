// The epusdt signature: every field but `signature`, nulls and empty strings dropped, each value
// as text (numbers in their shortest decimal form), the `k=v` pairs sorted and joined with `&`,
// the merchant token appended, lowercase hex MD5.

import { createHash } from 'node:crypto';
import { numberText } from '../amounts.js';
import { sameHex } from '../signature.js';

export type SignedValue = string | number | null | undefined;

export function epusdtSignString(fields: Record<string, SignedValue>): string {
  const pairs: string[] = [];
  for (const [k, v] of Object.entries(fields)) {
    if (k === 'signature' || v === null || v === undefined || v === '') continue;
    const text = typeof v === 'number' ? numberText(v) : v;
    if (text === null) throw new RangeError(`epusdt: field ${k} has no plain decimal form`);
    pairs.push(`${k}=${text}`);
  }
  // The servers sort the joined pairs byte-wise; for the protocol's field names that is the
  // same as sorting by key.
  pairs.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return pairs.join('&');
}

export const epusdtSignature = (fields: Record<string, SignedValue>, token: string): string =>
  createHash('md5')
    .update(epusdtSignString(fields) + token)
    .digest('hex');

export function epusdtSignatureValid(fields: Record<string, SignedValue>, token: string): boolean {
  let expected: string;
  try {
    expected = epusdtSignature(fields, token);
  } catch {
    return false;
  }
  return sameHex(expected, fields.signature);
}
