// The admin API's deposits: the list, and confirming or failing one by hand
// (src/admin/deposits.ts). No Node imports: the web client takes its types from here.

import * as v from 'valibot';
import { Instant, Limit, Money, Reason, Text } from './common.js';

export const DepositsAdminQuery = v.object({
  status: v.optional(v.picklist(['pending', 'paid', 'expired', 'failed'], 'must be pending, paid, expired or failed')),
  method: v.optional(Text(32)),
  user: v.optional(v.pipe(v.string(), v.uuid('must be a user id'))),
  limit: v.optional(Limit),
  /** next_before of the previous page, unchanged. */
  before: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(80),
      v.regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z_[0-9a-f-]{36}$/, 'must be next_before of the previous page'),
    ),
  ),
});
export const DepositActionBody = v.object(
  { reason: Reason, reference: v.optional(Text(200)) },
  'must be a JSON object',
);

export const AdminDeposit = v.object({
  id: v.string(),
  user_id: v.string(),
  email: v.string(),
  method: v.string(),
  provider: v.nullable(v.string()),
  status: v.picklist(['pending', 'paid', 'expired', 'failed']),
  amount: v.string(),
  currency: v.string(),
  credit_usd: Money,
  reference: v.nullable(v.string()),
  details: v.unknown(),
  created_at: Instant,
  paid_at: v.nullable(Instant),
  expires_at: v.nullable(Instant),
});
export const AdminDepositList = v.object({ data: v.array(AdminDeposit), next_before: v.nullable(v.string()) });

export type AdminDepositT = v.InferOutput<typeof AdminDeposit>;
export type AdminDepositListT = v.InferOutput<typeof AdminDepositList>;
