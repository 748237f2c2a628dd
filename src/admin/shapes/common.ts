// Pieces the admin API's shapes share (./users.ts and the others beside it): the bounds, a
// reason, a USD amount in and out, a page size, an instant. No Node imports: the web client
// takes its types from these files.

import * as v from 'valibot';

const MAX_REASON = 500;
const MAX_PAGE = 200;

export const Reason = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(MAX_REASON, `must be at most ${MAX_REASON} characters`),
);
/**
 * USD as a decimal string, up to 9 decimals: money never travels as a float. Below a billion
 * (MAX_AMOUNT_USD in src/billing/money.ts, the most a balance holds): nine digits at most.
 */
export const UsdAmount = v.pipe(
  v.string('must be a decimal string of USD'),
  v.maxLength(24, 'is too long'),
  v.regex(
    /^\d{1,9}(\.\d{1,9})?$/,
    'must be a positive USD amount below 1000000000 with at most 9 decimals, as a string',
  ),
);
export const Limit = v.pipe(
  v.string(),
  v.maxLength(4, 'is too large'),
  v.regex(/^[1-9]\d*$/, 'must be a whole number from 1'),
);
export const Text = (max: number) => v.pipe(v.string(), v.maxLength(max, `must be at most ${max} characters`));

export const ADMIN_LIMITS = { reason: MAX_REASON, page: MAX_PAGE } as const;

export const Money = v.pipe(v.string(), v.regex(/^-?\d+\.\d{9}$/, 'USD, decimal string, 9 decimals'));
export const Instant = v.pipe(v.string(), v.isoTimestamp('ISO-8601 instant'));
