// Every shape of the admin API, once: valibot schemas that validate requests (and describe
// answers), from which the OpenAPI document is derived (./json-schema.ts, ./openapi.ts) and the
// web client takes its types (`import type` from web/src/pages/admin/). Kept free of Node
// imports for that reason.

import * as v from 'valibot';

const MAX_REASON = 500;
const MAX_PAGE = 200;

const Reason = v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(MAX_REASON, `must be at most ${MAX_REASON} characters`));
/**
 * USD as a decimal string, up to 9 decimals: money never travels as a float. Below a billion
 * (MAX_AMOUNT_USD in src/billing/money.ts, the most a balance holds): nine digits at most.
 */
const UsdAmount = v.pipe(
  v.string('must be a decimal string of USD'),
  v.maxLength(24, 'is too long'),
  v.regex(/^\d{1,9}(\.\d{1,9})?$/, 'must be a positive USD amount below 1000000000 with at most 9 decimals, as a string'),
);
const Limit = v.pipe(v.string(), v.maxLength(4, 'is too large'), v.regex(/^[1-9]\d*$/, 'must be a whole number from 1'));
const Text = (max: number) => v.pipe(v.string(), v.maxLength(max, `must be at most ${max} characters`));

export const ADMIN_LIMITS = { reason: MAX_REASON, page: MAX_PAGE } as const;

// ---- requests ----

export const UsersQuery = v.object({
  q: v.optional(Text(254)),
  limit: v.optional(Limit),
  /** The last email of the previous page. */
  after: v.optional(Text(254)),
});
export const AdjustBody = v.object({ amount_usd: UsdAmount, reason: Reason }, 'must be a JSON object');
export const DisableBody = v.object({ reason: v.optional(Reason) }, 'must be a JSON object');
export const RoleBody = v.object({ admin: v.boolean('must be true or false') }, 'must be a JSON object');
export const AuditQuery = v.object({
  limit: v.optional(Limit),
  /** The id of the last entry of the previous page. */
  before: v.optional(v.pipe(v.string(), v.maxLength(19), v.regex(/^\d+$/, 'must be an entry id'))),
  action: v.optional(Text(64)),
});

export const NewCodesBody = v.object({
  count: v.pipe(v.number('must be a number'), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'), v.maxValue(1000, 'must be at most 1000')),
  amount_usd: UsdAmount,
  expires_at: v.pipe(v.string('must be a string'), v.maxLength(64, 'is too long'), v.isoTimestamp('must be an ISO-8601 instant with its offset')),
  note: v.optional(Text(200)),
}, 'must be a JSON object');
export const CodesQuery = v.object({
  batch: v.optional(v.pipe(v.string(), v.uuid('must be a batch id'))),
  status: v.optional(v.picklist(['open', 'redeemed', 'expired'], 'must be open, redeemed or expired')),
  limit: v.optional(Limit),
});
export const RedeemBody = v.object({ code: v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(64, 'is not a code')) }, 'must be a JSON object');

export const DepositsAdminQuery = v.object({
  status: v.optional(v.picklist(['pending', 'paid', 'expired', 'failed'], 'must be pending, paid, expired or failed')),
  method: v.optional(Text(32)),
  user: v.optional(v.pipe(v.string(), v.uuid('must be a user id'))),
  limit: v.optional(Limit),
  /** next_before of the previous page, unchanged. */
  before: v.optional(v.pipe(v.string(), v.maxLength(80), v.regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z_[0-9a-f-]{36}$/, 'must be next_before of the previous page'))),
});
export const DepositActionBody = v.object({ reason: Reason, reference: v.optional(Text(200)) }, 'must be a JSON object');

const PerMillion = v.pipe(v.number('must be a number'), v.minValue(0, 'must not be negative'));
// `output` may be left out for an embedding model; the catalogue's own rules then say whether the model needs one.
const Pricing = v.object({ input: PerMillion, output: v.optional(PerMillion), cache_read: v.optional(PerMillion), cache_write: v.optional(PerMillion) }, 'must be prices in USD per million tokens');
/** One model's changes; a field left out stays as it is. `routes` replaces the list (its order is the fallback order). */
export const ModelPatchBody = v.object({
  enabled: v.optional(v.boolean('must be true or false')),
  pricing: v.optional(Pricing),
  official_pricing: v.optional(Pricing),
  routes: v.optional(v.pipe(v.array(v.object({
    provider: Text(64),
    model: Text(200),
    enabled: v.optional(v.boolean('must be true or false')),
    reasoning: v.optional(v.boolean('must be true or false')),
    upstream_pricing: v.optional(Pricing),
  })), v.minLength(1, 'must list at least one route'))),
}, 'must be a JSON object');

export const RevenueQuery = v.object({ days: v.optional(v.pipe(v.string(), v.regex(/^([1-9]|[1-9]\d|[1-3]\d\d)$/, 'must be a whole number of days from 1 to 399'))) });

export const AlertsBody = v.object({ low_balance_usd: v.nullable(UsdAmount) }, 'must be a JSON object');

// ---- answers ----

const Money = v.pipe(v.string(), v.regex(/^-?\d+\.\d{9}$/, 'USD, decimal string, 9 decimals'));
const Instant = v.pipe(v.string(), v.isoTimestamp('ISO-8601 instant'));

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
  keys: v.array(v.object({ id: v.string(), name: v.string(), prefix: v.string(), created_at: Instant, last_used_at: v.nullable(Instant), revoked_at: v.nullable(Instant) })),
  /** The last 30 days, per model. */
  usage: v.array(v.object({ model: v.string(), requests: v.number(), prompt_tokens: v.number(), completion_tokens: v.number(), cost_usd: Money })),
  adjustments: v.array(v.object({ id: v.string(), amount_usd: Money, reason: v.string(), actor: v.string(), created_at: Instant })),
});

export const AdjustAnswer = v.object({ adjustment_id: v.string(), balance_before_usd: Money, balance_usd: Money });

export const AuditEntry = v.object({
  id: v.string(),
  actor: v.string(),
  actor_id: v.nullable(v.string()),
  action: v.string(),
  target: v.nullable(v.string()),
  reason: v.nullable(v.string()),
  before: v.unknown(),
  after: v.unknown(),
  created_at: Instant,
});
export const AuditList = v.object({ data: v.array(AuditEntry), next_before: v.nullable(v.string()) });

export const NewCodes = v.object({ batch_id: v.string(), amount_usd: Money, expires_at: Instant, codes: v.array(v.string()) });
export const CodeList = v.object({
  data: v.array(v.object({
    id: v.string(), batch_id: v.string(), prefix: v.string(), amount_usd: Money, expires_at: Instant, note: v.string(), created_by: v.string(), created_at: Instant,
    status: v.picklist(['open', 'redeemed', 'expired']), redeemed_at: v.nullable(Instant), redeemed_by: v.nullable(v.string()),
  })),
});
export const RedeemAnswer = v.object({ credited_usd: Money, balance_usd: Money });

export const AdminDeposit = v.object({
  id: v.string(), user_id: v.string(), email: v.string(), method: v.string(), provider: v.nullable(v.string()),
  status: v.picklist(['pending', 'paid', 'expired', 'failed']), amount: v.string(), currency: v.string(), credit_usd: Money,
  reference: v.nullable(v.string()), details: v.unknown(), created_at: Instant, paid_at: v.nullable(Instant), expires_at: v.nullable(Instant),
});
export const AdminDepositList = v.object({ data: v.array(AdminDeposit), next_before: v.nullable(v.string()) });

export type AdminDepositT = v.InferOutput<typeof AdminDeposit>;
export type AdminDepositListT = v.InferOutput<typeof AdminDepositList>;
export const CatalogueState = v.object({
  version: v.nullable(v.string()),
  source: v.picklist(['postgres', 'file']),
  saved_by: v.nullable(v.string()),
  saved_at: v.nullable(Instant),
  /** What serves now: the models in service and their routes in order (provider/model). */
  in_service: v.array(v.object({ id: v.string(), routes: v.array(v.string()) })),
  /** The catalogue file's JSON, switched-off entries and upstream prices included. */
  document: v.unknown(),
});
export type CatalogueStateT = v.InferOutput<typeof CatalogueState>;
const HealthWindow = v.object({
  attempts: v.number(), errors: v.number(), error_rate: v.number(),
  avg_latency_ms: v.nullable(v.number()), max_latency_ms: v.nullable(v.number()), cooldowns: v.number(),
});
export const Health = v.object({
  routes: v.array(v.object({
    /** provider/model */
    route: v.string(),
    in_catalogue: v.boolean(),
    cooling_until: v.nullable(Instant),
    /** The last five minutes. */
    now: HealthWindow,
    /** The last 24 hours. */
    day: HealthWindow,
    hourly: v.array(v.object({ hour: Instant, attempts: v.number(), errors: v.number(), avg_latency_ms: v.nullable(v.number()) })),
  })),
});
const RevenueMoney = { income_usd: Money, upstream_cost_usd: v.nullable(Money), margin_usd: v.nullable(Money) };
export const Revenue = v.object({
  days: v.number(),
  per_day: v.array(v.object({ day: v.string(), requests: v.number(), ...RevenueMoney })),
  per_model: v.array(v.object({ model: v.string(), requests: v.number(), ...RevenueMoney })),
  deposits: v.array(v.object({ day: v.string(), method: v.string(), count: v.number(), credited_usd: Money })),
});
export type HealthT = v.InferOutput<typeof Health>;
export type RevenueT = v.InferOutput<typeof Revenue>;
/** GET /api/dashboard/alerts: the threshold, and whether the balance is below it (the banner). */
export const Alerts = v.object({ low_balance_usd: v.nullable(Money), below: v.boolean() });
export type AlertsT = v.InferOutput<typeof Alerts>;
export type NewCodesT = v.InferOutput<typeof NewCodes>;
export type CodeListT = v.InferOutput<typeof CodeList>;
export type RedeemAnswerT = v.InferOutput<typeof RedeemAnswer>;
export type AdminUserT = v.InferOutput<typeof AdminUser>;
export type AdminUserListT = v.InferOutput<typeof AdminUserList>;
export type AdminUserDetailT = v.InferOutput<typeof AdminUserDetail>;
export type AdjustAnswerT = v.InferOutput<typeof AdjustAnswer>;
export type AuditEntryT = v.InferOutput<typeof AuditEntry>;
export type AuditListT = v.InferOutput<typeof AuditList>;
