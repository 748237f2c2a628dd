// Exact amounts for deposits. Providers speak decimal text (or JSON numbers) in rupiah, USD and
// USDT; rates and fees come from env config as decimal text. All of it is compared and
// converted here as scaled integers: a float never decides how much money a user gets.

import { NANO_PER_USD } from '../billing/money.js';

/** value = units / 10^scale */
export interface Decimal {
  units: bigint;
  scale: number;
}

const DECIMAL = /^(\d{1,30})(?:\.(\d{1,18}))?$/;

/** "16250.5" → {units: 162505n, scale: 1}; anything else (signs, exponents, blanks) → null. */
export function parseDecimal(text: string): Decimal | null {
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const frac = m[2] ?? '';
  return { units: BigInt(m[1] + frac), scale: frac.length };
}

/**
 * A JSON number as the decimal its sender wrote. Go and JavaScript both encode a float in its
 * shortest round-trip form, so the text comes back exactly for any amount of up to 15
 * significant digits; exponent forms (tiny or huge values) are no amount and give null.
 */
export function numberText(n: unknown): string | null {
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) return null;
  const s = String(n);
  return /^\d+(\.\d+)?$/.test(s) ? s : null;
}

/** Decimal text or a JSON number → Decimal (null when it is neither). */
export function toDecimal(value: unknown): Decimal | null {
  if (typeof value === 'number') {
    const text = numberText(value);
    return text === null ? null : parseDecimal(text);
  }
  return typeof value === 'string' ? parseDecimal(value.trim()) : null;
}

/** a − b as a sign: −1, 0, 1. */
export function compareDecimal(a: Decimal, b: Decimal): number {
  const scale = Math.max(a.scale, b.scale);
  const x = a.units * 10n ** BigInt(scale - a.scale);
  const y = b.units * 10n ** BigInt(scale - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Same amount, whatever the trailing zeros: "25000.00" and 25000 are equal, "25000.01" is not. */
export function sameAmount(a: unknown, b: unknown): boolean {
  const x = toDecimal(a);
  const y = toDecimal(b);
  return x !== null && y !== null && compareDecimal(x, y) === 0;
}

/** Shortest text: {4200n, 2} → "42", {4250n, 2} → "42.5". */
export function formatDecimal(d: Decimal): string {
  const digits = d.units.toString().padStart(d.scale + 1, '0');
  const int = digits.slice(0, digits.length - d.scale);
  const frac = digits.slice(digits.length - d.scale).replace(/0+$/, '');
  return frac ? `${int}.${frac}` : int;
}

const pow10 = (n: number) => 10n ** BigInt(n);
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

/**
 * USD credit (nano) for a rupiah amount: amount × (1 − fee/100) / rate, rounded down to the
 * nano-dollar, so the gateway never credits a fraction of a nano it was not paid.
 */
export function idrCreditNano(amountIdr: bigint, idrPerUsd: Decimal, feePct: Decimal): bigint {
  const hundred = 100n * pow10(feePct.scale);
  const numerator = amountIdr * (hundred - feePct.units) * pow10(idrPerUsd.scale) * NANO_PER_USD;
  return numerator / (hundred * idrPerUsd.units);
}

/** What to ask for a USD credit at `perUsd` units a dollar, rounded up to the cent. */
export function usdToPayCents(creditCents: bigint, perUsd: Decimal): Decimal {
  return { units: ceilDiv(creditCents * perUsd.units, pow10(perUsd.scale)), scale: 2 };
}

/** "12.5" or 12.5 → 1250n cents; more than two decimals or no amount → null. */
export function usdCents(value: unknown): bigint | null {
  let d = toDecimal(value);
  while (d && d.scale > 2 && d.units % 10n === 0n) d = { units: d.units / 10n, scale: d.scale - 1 };
  if (!d || d.scale > 2) return null;
  return d.units * pow10(2 - d.scale);
}

export const centsToNano = (cents: bigint): bigint => cents * (NANO_PER_USD / 100n);
