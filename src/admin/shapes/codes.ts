// The admin API's redemption codes: making a batch and listing them, and a user's redeeming
// one (POST /api/dashboard/redeem; src/admin/codes.ts). No Node imports: the web client takes
// its types from here.

import * as v from 'valibot';
import { Instant, Limit, Money, Text, UsdAmount } from './common.js';

export const NewCodesBody = v.object(
  {
    count: v.pipe(
      v.number('must be a number'),
      v.integer('must be a whole number'),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(1000, 'must be at most 1000'),
    ),
    amount_usd: UsdAmount,
    expires_at: v.pipe(
      v.string('must be a string'),
      v.maxLength(64, 'is too long'),
      v.isoTimestamp('must be an ISO-8601 instant with its offset'),
    ),
    note: v.optional(Text(200)),
  },
  'must be a JSON object',
);
export const CodesQuery = v.object({
  batch: v.optional(v.pipe(v.string(), v.uuid('must be a batch id'))),
  status: v.optional(v.picklist(['open', 'redeemed', 'expired'], 'must be open, redeemed or expired')),
  limit: v.optional(Limit),
});
export const RedeemBody = v.object(
  {
    code: v.pipe(
      v.string('must be a string'),
      v.trim(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(64, 'is not a code'),
    ),
  },
  'must be a JSON object',
);

export const NewCodes = v.object({
  batch_id: v.string(),
  amount_usd: Money,
  expires_at: Instant,
  codes: v.array(v.string()),
});
export const CodeList = v.object({
  data: v.array(
    v.object({
      id: v.string(),
      batch_id: v.string(),
      prefix: v.string(),
      amount_usd: Money,
      expires_at: Instant,
      note: v.string(),
      created_by: v.string(),
      created_at: Instant,
      status: v.picklist(['open', 'redeemed', 'expired']),
      redeemed_at: v.nullable(Instant),
      redeemed_by: v.nullable(v.string()),
    }),
  ),
});
export const RedeemAnswer = v.object({ credited_usd: Money, balance_usd: Money });

export type NewCodesT = v.InferOutput<typeof NewCodes>;
export type CodeListT = v.InferOutput<typeof CodeList>;
export type RedeemAnswerT = v.InferOutput<typeof RedeemAnswer>;
