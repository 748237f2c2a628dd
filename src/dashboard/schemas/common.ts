// Pieces of the dashboard's request schemas (./account.ts, ./keys.ts, ./usage.ts, ./money.ts):
// the bounds, a path's id, and what the lists' query strings share (a time range, a page size,
// a cursor). Lengths are capped before any pattern runs, so a megabyte of input costs a length
// check, not a regex.

import * as v from 'valibot';
import { decodeCursor, type CursorKind } from '../cursor.js';
import { rule } from './parse.js';

export const LIMITS = {
  email: 254,
  passwordMin: 8,
  passwordMax: 1024,
  name: 100,
  token: 256,
  model: 200,
  date: 64,
  cursor: 256,
  pageMax: 500,
  pageDefault: 50,
} as const;

export const Uuid = v.pipe(v.string(), v.maxLength(36), v.uuid());

export const RANGES = {
  '24h': 24 * 3600_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
  '90d': 90 * 86_400_000,
} as const;
export type RangeName = keyof typeof RANGES;

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * An ISO-8601 date or instant. A date alone is midnight UTC, and so is a time without an
 * offset: a server-side "local time" would depend on where the gateway runs.
 */
export function parseInstant(text: string): Date | null {
  const m = ISO.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone = 'Z'] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d);
  const hour = Number(h),
    minute = Number(mi),
    second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCDate() !== day || calendar.getUTCMonth() !== month - 1) return null;
  let offsetMin = 0;
  if (zone.toUpperCase() !== 'Z') {
    const zm = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
    const oh = Number(zm[2]),
      om = Number(zm[3] ?? '0');
    if (oh > 14 || om > 59) return null;
    offsetMin = (zm[1] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const ms = frac ? Math.floor(Number(`0${frac}`) * 1000) : 0;
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMin * 60_000;
  const date = new Date(t);
  if (year < 1970 || Number.isNaN(date.getTime())) return null;
  return date;
}

export const Instant = v.pipe(
  v.string(),
  v.maxLength(LIMITS.date, 'is too long to be a date'),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const date = parseInstant(dataset.value);
    if (!date) {
      addIssue({
        message: rule('invalid_date', 'must be an ISO-8601 date or instant, e.g. 2025-01-31 or 2025-01-31T12:00:00Z'),
      });
      return NEVER;
    }
    return date;
  }),
);

export const RangeEntries = {
  from: v.optional(Instant),
  to: v.optional(Instant),
  range: v.optional(
    v.picklist(
      Object.keys(RANGES) as RangeName[],
      rule('not_allowed', `must be one of ${Object.keys(RANGES).join(', ')}`, { allowed: Object.keys(RANGES) }),
    ),
  ),
};

export const Limit = v.pipe(
  v.string(),
  v.regex(
    /^\d{1,4}$/,
    rule('not_integer', `must be a whole number from 1 to ${LIMITS.pageMax}`, { min: 1, max: LIMITS.pageMax }),
  ),
  v.transform(Number),
  v.minValue(1, `must be at least 1`),
  v.maxValue(LIMITS.pageMax, `must be at most ${LIMITS.pageMax}`),
);

export const CursorParam = (kind: CursorKind) =>
  v.pipe(
    v.string(),
    v.maxLength(LIMITS.cursor, 'is not a cursor from this list'),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const c = decodeCursor(kind, dataset.value);
      if (!c) {
        addIssue({
          message: rule('invalid_cursor', 'is not a cursor from this list (pass its next_cursor back unchanged)'),
        });
        return NEVER;
      }
      return c;
    }),
  );

export interface TimeRange {
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to?: Date;
}

export function resolveRange(q: { from?: Date; to?: Date; range?: RangeName }): TimeRange {
  if (q.range) return { from: new Date(Date.now() - RANGES[q.range]) };
  return { from: q.from, to: q.to };
}

export type RangeInput = { from?: Date; to?: Date; range?: RangeName };
export const notMixed = (q: RangeInput) => !(q.range && (q.from || q.to));
export const ordered = (q: RangeInput) => !(q.from && q.to && q.from.getTime() > q.to.getTime());
export const MIXED = rule('mixed_range', 'Give either "range" or "from"/"to", not both');
export const DISORDERED = rule('disordered_range', '"from" must not be after "to"');
