// Money is an integer count of nano-USD (1e-9 USD) everywhere (API.md §2). These are the
// only conversions to and from the decimal strings of the JSON APIs.

import type { IRUsage } from '../dialects/ir.js';
import type { Prices } from '../catalogue/prices.js';

export const NANO_PER_USD = 1_000_000_000n;
/**
 * The most a balance may hold, and so the most any one amount that enters one may be: $1
 * billion, a tenth of what Postgres's bigint of nano-USD can count, so that no sum of them
 * overflows on the way to a refusal.
 */
export const MAX_AMOUNT_USD = 1_000_000_000;
export const MAX_BALANCE_NANO = BigInt(MAX_AMOUNT_USD) * NANO_PER_USD;
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

/** For people: "4.9989165", "0.00", "12.50": exact (never rounded), without trailing zeros past the cents. */
export function usdText(nano: bigint): string {
  return nanoToUsd(nano).replace(/(\.\d\d\d*?)0+$/, '$1');
}

/**
 * Cost of a request: each token count at its own price (API.md §2), audio and one-hour cache
 * writes at theirs, plus the searches the upstream ran. Prices are nano-USD per million tokens,
 * so the sum is exact; the one division rounds up to the next nano-dollar. Past a long-context
 * threshold the whole request is priced at the long-context prices, as Anthropic bills it.
 */
export function costOf(usage: IRUsage, base: Prices): bigint {
  const lc = base.longContext;
  const p = lc && usage.input + usage.cacheRead + usage.cacheWrite > lc.threshold ? lc.prices : base;
  const audioIn = BigInt(Math.min(usage.audioIn ?? 0, usage.input));
  const audioOut = BigInt(Math.min(usage.audioOut ?? 0, usage.output));
  const hour = BigInt(Math.min(usage.cacheWrite1h ?? 0, usage.cacheWrite));
  const total =
    (BigInt(usage.input) - audioIn) * p.input +
    audioIn * (p.audioIn ?? p.input) +
    BigInt(usage.cacheRead) * p.cacheRead +
    (BigInt(usage.cacheWrite) - hour) * p.cacheWrite +
    hour * p.cacheWrite1h +
    (BigInt(usage.output) - audioOut) * p.output +
    audioOut * (p.audioOut ?? p.output) +
    BigInt(usage.webSearches ?? 0) * base.perWebSearch * MILLION;
  return (total + MILLION - 1n) / MILLION;
}

/**
 * The most a request can cost: every input token at the dearest price an input token of it can
 * be billed at, the whole output budget at the dearest output price, and what is priced per call.
 */
export function worstCase(
  inputTokens: number,
  outputTokens: number,
  inputPrice: bigint,
  outputPrice: bigint,
  extraNano = 0n,
): bigint {
  const total = BigInt(inputTokens) * inputPrice + BigInt(outputTokens) * outputPrice;
  return (total + MILLION - 1n) / MILLION + extraNano;
}
