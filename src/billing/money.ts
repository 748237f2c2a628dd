// Money is an integer count of nano-USD (1e-9 USD) everywhere (API.md §2). These are the
// only conversions to and from the decimal strings of the JSON APIs.

import type { IRUsage } from '../dialects/ir.js';
import type { Prices } from '../catalogue/index.js';

export const NANO_PER_USD = 1_000_000_000n;
const MILLION = 1_000_000n;

/** "12.5" or 12.5 → 12_500_000_000n. Refuses more than 9 decimals rather than rounding money. */
export function usdToNano(usd: string | number): bigint {
  const text = typeof usd === 'number' ? usdNumberText(usd) : usd.trim();
  const m = /^(\d+)(?:\.(\d{1,9}))?$/.exec(text);
  if (!m) throw new RangeError(`not a non-negative USD amount with at most 9 decimals: ${JSON.stringify(usd)}`);
  return BigInt(m[1]) * NANO_PER_USD + BigInt((m[2] ?? '').padEnd(9, '0'));
}

function usdNumberText(n: number): string {
  if (!Number.isFinite(n) || n < 0) return String(n);
  // toFixed(9) then trim: avoids exponent notation for small and large numbers alike.
  const text = n.toFixed(9).replace(/\.?0+$/, '');
  // toFixed rounds: a number with finer digits than the nano is refused, as its text would be.
  return Number(text) === n ? text : String(n);
}

/** 12_500_000_000n → "12.500000000" (always nine decimals, so strings compare as numbers do). */
export function nanoToUsd(nano: bigint): string {
  const sign = nano < 0n ? '-' : '';
  const abs = nano < 0n ? -nano : nano;
  return `${sign}${abs / NANO_PER_USD}.${(abs % NANO_PER_USD).toString().padStart(9, '0')}`;
}

/**
 * Cost of a request: each token count at its own price (API.md §2). Prices are nano-USD per
 * million tokens, so the sum is exact; the one division rounds up to the next nano-dollar.
 */
export function costOf(usage: IRUsage, prices: Prices): bigint {
  const total =
    BigInt(usage.input) * prices.input +
    BigInt(usage.cacheRead) * prices.cacheRead +
    BigInt(usage.cacheWrite) * prices.cacheWrite +
    BigInt(usage.output) * prices.output;
  return (total + MILLION - 1n) / MILLION;
}

/** The most a request can cost: every input token at the dearest input price, plus the full output budget. */
export function worstCase(inputTokens: number, maxOutputTokens: number, prices: Prices): bigint {
  let inputPrice = prices.input;
  if (prices.cacheWrite > inputPrice) inputPrice = prices.cacheWrite;
  const total = BigInt(inputTokens) * inputPrice + BigInt(maxOutputTokens) * prices.output;
  return (total + MILLION - 1n) / MILLION;
}
