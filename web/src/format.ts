// Numbers, money and times for display. Money arrives as decimal strings with nine decimals;
// it is only ever shown here, never added up, so reading it as a float for display is safe.

import type { Lang } from './i18n.js';

const locale = (lang: Lang) => (lang === 'id' ? 'id-ID' : 'en-US');

export function usd(lang: Lang, value: string | number): string {
  const n = Number(value);
  // Small sums (one request's cost) need their digits; balances read better with cents.
  const digits = n !== 0 && Math.abs(n) < 1 ? 6 : 2;
  return new Intl.NumberFormat(locale(lang), { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: digits }).format(n);
}

export const idr = (lang: Lang, value: string | number) =>
  new Intl.NumberFormat(locale(lang), { style: 'currency', currency: 'IDR', maximumFractionDigits: 0 }).format(Number(value));

export const num = (lang: Lang, value: number | string) => new Intl.NumberFormat(locale(lang)).format(Number(value));

/** A price per million tokens (a JSON number in USD). */
export const price = (lang: Lang, value: number | undefined) =>
  value === undefined ? '—' : new Intl.NumberFormat(locale(lang), { style: 'currency', currency: 'USD', maximumFractionDigits: 4 }).format(value);

export const dateTime = (lang: Lang, iso: string | null) =>
  iso ? new Intl.DateTimeFormat(locale(lang), { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso)) : '—';

/** An amount in the deposit's own currency. */
export const money = (lang: Lang, amount: string, currency: string) => (currency === 'IDR' ? idr(lang, amount) : usd(lang, amount));

/** m:ss until `iso`, 0:00 once passed. */
export function countdown(iso: string, now: number): string {
  const s = Math.max(0, Math.floor((Date.parse(iso) - now) / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
