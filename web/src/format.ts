// Numbers, money and times for display: one format per kind of figure, used by every page
// (user and admin), banner and message.
//
// Money (USD), whatever it measures (a balance, a credit, a cost, a price): from $1 up, dollars
// and cents; below $1, enough decimals for three significant digits (at least two decimals, at
// most the ledger's nine), so that a request's $0.000123 does not read as $0.00 while a balance
// reads $4.99 and not $4.9989165. Digits are cut, never rounded: the page never shows more money
// than the ledger holds ($4.9999 is $4.99, not $5.00). Trailing zeros past the cents go. The
// exact ledger string is in the element's title (<Money> in ui.tsx). Prices per million tokens
// follow the same rule with four places instead of two and three (an operator sets $0.0375).
// Rupiah: whole rupiah, grouped.
//
// Times: one form everywhere, to the second with the zone named, in the browser's time zone
// (usage rows need the second; a zone keeps a support conversation across time zones honest).
// Calendar days that the API counts in UTC (revenue per day) say so.

import type { Lang } from './i18n.js';

export const locale = (lang: Lang) => (lang === 'id' ? 'id-ID' : 'en-US');

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/** The fraction digits to show for a decimal: `whole` places from 1 up, else `sig` significant ones. */
function cut(int: string, frac: string, whole: number, sig: number): string {
  const zeros = /^0*/.exec(frac)![0].length;
  const places = /[1-9]/.test(int) ? whole : Math.min(9, Math.max(2, zeros + sig));
  return frac.slice(0, places).replace(/0+$/, '').padEnd(2, '0');
}

/** A decimal string as USD in the language's currency form, cut to the rule above. */
function dollars(lang: Lang, value: string, whole: number, sig: number): string {
  const m = DECIMAL.exec(value.trim());
  if (!m) return value;
  const [, sign, int, frac = ''] = m;
  const digits = cut(int, frac, whole, sig);
  const negative = sign === '-' && /[1-9]/.test(int + digits);
  // Intl places the symbol, sign and separators; the digits are the string's own.
  const parts = new Intl.NumberFormat(locale(lang), {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: 2,
  }).formatToParts(negative ? -1 : 1);
  return parts
    .map((p) =>
      p.type === 'integer' ? BigInt(int).toLocaleString(locale(lang)) : p.type === 'fraction' ? digits : p.value,
    )
    .join('');
}

/** A USD amount (the API's decimal string, or a number) for display. */
export const usd = (lang: Lang, value: string | number): string =>
  dollars(lang, typeof value === 'number' ? value.toFixed(9) : value, 2, 3);

/** An estimate in USD (what a top-up buys): the same form, cut past float noise (3.0799999… is 3.08). */
export const usdAbout = (lang: Lang, n: number) => usd(lang, (Math.floor(n * 100 + 1e-6) / 100).toFixed(2));

/** A price per million tokens (a JSON number in USD). */
export const price = (lang: Lang, value: number | undefined) =>
  value === undefined ? '—' : dollars(lang, value.toFixed(9), 4, 4);

export const idr = (lang: Lang, value: string | number) =>
  new Intl.NumberFormat(locale(lang), { style: 'currency', currency: 'IDR', maximumFractionDigits: 0 }).format(
    Number(value),
  );

/** An amount in the deposit's own currency. */
export const money = (lang: Lang, amount: string, currency: string) =>
  currency === 'IDR' ? idr(lang, amount) : usd(lang, amount);

export const num = (lang: Lang, value: number | string) => new Intl.NumberFormat(locale(lang)).format(Number(value));

/** A moment to the second, in the browser's time zone, with the zone named; '—' for none. */
export const dateTime = (lang: Lang, iso: string | null | undefined) =>
  iso
    ? new Intl.DateTimeFormat(locale(lang), {
        year: 'numeric',
        month: 'short',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
        hourCycle: 'h23',
        timeZoneName: 'short',
      }).format(new Date(iso))
    : '—';

/** A calendar day the API counts in UTC ("2025-05-01"), with the zone named. */
export const utcDay = (lang: Lang, day: string) =>
  new Intl.DateTimeFormat(locale(lang), {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
    timeZoneName: 'short',
  }).format(new Date(`${day}T00:00:00Z`));

/** m:ss until `iso`, 0:00 once passed. */
export function countdown(iso: string, now: number): string {
  const s = Math.max(0, Math.floor((Date.parse(iso) - now) / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
