// The admin API's accounts: the list, one account in full, balance adjustments, disabling and
// the admin role (src/admin/users.ts). No Node imports: the web client takes its types from here.

import * as v from 'valibot';
import { Instant, Limit, Money, Reason, Text, UsdAmount } from './common.js';

export const UsersQuery = v.object({
  q: v.optional(Text(254)),
  limit: v.optional(Limit),
  /** The last email of the previous page. */
  after: v.optional(Text(254)),
});
export const AdjustBody = v.object({ amount_usd: UsdAmount, reason: Reason }, 'must be a JSON object');
export const DisableBody = v.object({ reason: v.optional(Reason) }, 'must be a JSON object');
export const RoleBody = v.object({ admin: v.boolean('must be true or false') }, 'must be a JSON object');

export const AdminUser = v.object({
  id: v.string(),
  email: v.string(),
  is_admin: v.boolean(),
  disabled: v.boolean(),
  email_verified: v.boolean(),
  created_at: Instant,
  balance_usd: Money,
});
export const AdminUserList = v.object({ data: v.array(AdminUser), next_after: v.nullable(v.string()) });

export const AdminUserDetail = v.object({
  user: AdminUser,
  balance: v.object({ balance_usd: Money, reserved_usd: Money, available_usd: Money }),
  keys: v.array(
    v.object({
      id: v.string(),
      name: v.string(),
      prefix: v.string(),
      created_at: Instant,
      last_used_at: v.nullable(Instant),
      revoked_at: v.nullable(Instant),
    }),
  ),
  /** The last 30 days, per model. */
  usage: v.array(
    v.object({
      model: v.string(),
      requests: v.number(),
      prompt_tokens: v.number(),
      completion_tokens: v.number(),
      cost_usd: Money,
    }),
  ),
  adjustments: v.array(
    v.object({ id: v.string(), amount_usd: Money, reason: v.string(), actor: v.string(), created_at: Instant }),
  ),
});

export const AdjustAnswer = v.object({ adjustment_id: v.string(), balance_before_usd: Money, balance_usd: Money });

export type AdminUserT = v.InferOutput<typeof AdminUser>;
export type AdminUserListT = v.InferOutput<typeof AdminUserList>;
export type AdminUserDetailT = v.InferOutput<typeof AdminUserDetail>;
export type AdjustAnswerT = v.InferOutput<typeof AdjustAnswer>;
