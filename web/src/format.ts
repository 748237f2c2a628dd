// Numbers, money and times for display, one format per kind of figure:
// - amounts from the ledger (balances, costs, spend, credit) arrive as decimal strings with nine
//   decimals and are shown exactly, trailing zeros dropped down to cents: never rounded, so
//   never up ($4.9989165, not $5.00);
// - estimates (what a top-up buys) are numbers, shown to the cent rounded down;
// - prices per million tokens, up to four decimals; token counts grouped; times to the second
//   in the browser's time zone.

import type { Lang } from './i18n.js';

export const locale = (lang: Lang) => (lang === 'id' ? 'id-ID' : 'en-US');

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/** An exact USD amount from its decimal string, in the language's currency form. */
export function usd(lang: Lang, value: string): string {
  const m = DECIMAL.exec(value.trim());
  if (!m) return value;
  const [, sign, int, frac = ''] = m;
  const digits = frac.replace(/0+$/, '').padEnd(2, '0');
  // Intl places the symbol, sign and separators; the digits are the string's own.
  const negative = sign === '-' && /[1-9]/.test(int + frac);
  const parts = new Intl.NumberFormat(locale(lang), { style: 'currency', currency: 'USD', minimumFractionDigits: 2 }).formatToParts(negative ? -1 : 1);
  return parts.map((p) => (p.type === 'integer' ? BigInt(int).toLocaleString(locale(lang)) : p.type === 'fraction' ? digits : p.value)).join('');
}

/** An estimate in USD, to the cent, rounded down (past float noise: 3.0799999… is 3.08). */
export const usdAbout = (lang: Lang, n: number) =>
  new Intl.NumberFormat(locale(lang), { style: 'currency', currency: 'USD' }).format(Math.floor(n * 100 + 1e-6) / 100);

export const idr = (lang: Lang, value: string | number) =>
  new Intl.NumberFormat(locale(lang), { style: 'currency', currency: 'IDR', maximumFractionDigits: 0 }).format(Number(value));

export const num = (lang: Lang, value: number | string) => new Intl.NumberFormat(locale(lang)).format(Number(value));

/** A price per million tokens (a JSON number in USD). */
export const price = (lang: Lang, value: number | undefined) =>
  value === undefined ? '—' : new Intl.NumberFormat(locale(lang), { style: 'currency', currency: 'USD', maximumFractionDigits: 4 }).format(value);

export const dateTime = (lang: Lang, iso: string | null) =>
  iso ? new Intl.DateTimeFormat(locale(lang), { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso)) : '—';

/** A moment to the second, in the browser's time zone, with the zone named. */
export const instant = (lang: Lang, iso: string) =>
  new Intl.DateTimeFormat(locale(lang), { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' }).format(new Date(iso));

/** An amount in the deposit's own currency. */
export const money = (lang: Lang, amount: string, currency: string) => (currency === 'IDR' ? idr(lang, amount) : usd(lang, amount));

/** m:ss until `iso`, 0:00 once passed. */
export function countdown(iso: string, now: number): string {
  const s = Math.max(0, Math.floor((Date.parse(iso) - now) / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
