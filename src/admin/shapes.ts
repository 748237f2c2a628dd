// Every shape of the admin API, once: valibot schemas that validate requests (and describe
// answers), from which the OpenAPI document is derived (src/server/json-schema.ts, ./openapi.ts) and the
// web client takes its types (`import type` from web/src/pages/admin/). Kept free of Node
// imports for that reason.

import * as v from 'valibot';

const MAX_REASON = 500;
const MAX_PAGE = 200;

const Reason = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(MAX_REASON, `must be at most ${MAX_REASON} characters`),
);
/**
 * USD as a decimal string, up to 9 decimals: money never travels as a float. Below a billion
 * (MAX_AMOUNT_USD in src/billing/money.ts, the most a balance holds): nine digits at most.
 */
const UsdAmount = v.pipe(
  v.string('must be a decimal string of USD'),
  v.maxLength(24, 'is too long'),
  v.regex(
    /^\d{1,9}(\.\d{1,9})?$/,
    'must be a positive USD amount below 1000000000 with at most 9 decimals, as a string',
  ),
);
const Limit = v.pipe(
  v.string(),
  v.maxLength(4, 'is too large'),
  v.regex(/^[1-9]\d*$/, 'must be a whole number from 1'),
);
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

const PerMillion = v.pipe(v.number('must be a number'), v.minValue(0, 'must not be negative'));
// `output` may be left out for an embedding model; the catalogue's own rules then say whether the model needs one.
const Pricing = v.object(
  {
    input: PerMillion,
    output: v.optional(PerMillion),
    cache_read: v.optional(PerMillion),
    cache_write: v.optional(PerMillion),
  },
  'must be prices in USD per million tokens',
);
/** A model's routes, in fallback order. */
const ModelPatchRoutes = v.pipe(
  v.array(
    v.object({
      provider: Text(64),
      model: Text(200),
      enabled: v.optional(v.boolean('must be true or false')),
      reasoning: v.optional(v.boolean('must be true or false')),
      upstream_pricing: v.optional(Pricing),
      /** Share of first tries (0: fallback only); without weights the routes are tried in order. */
      weight: v.optional(
        v.pipe(
          v.number('must be a number'),
          v.integer('must be a whole number'),
          v.minValue(0, 'must not be negative'),
          v.maxValue(1000, 'must be at most 1000'),
        ),
      ),
    }),
  ),
  v.minLength(1, 'must list at least one route'),
);
/** One model's changes; a field left out stays as it is. `routes` replaces the list (its order is the fallback order). */
export const ModelPatchBody = v.object(
  {
    enabled: v.optional(v.boolean('must be true or false')),
    pricing: v.optional(Pricing),
    official_pricing: v.optional(Pricing),
    routes: v.optional(ModelPatchRoutes),
  },
  'must be a JSON object',
);

/** A new model: the catalogue file's model entry (its rules checked as the file's are), with its routes. */
export const NewModelBody = v.object(
  {
    id: Text(128),
    kind: v.optional(v.picklist(['chat', 'embedding'], 'must be chat or embedding')),
    display_name: v.optional(Text(200)),
    owned_by: v.optional(Text(100)),
    context_window: v.optional(
      v.pipe(v.number('must be a number'), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1')),
    ),
    max_output_tokens: v.optional(
      v.pipe(v.number('must be a number'), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1')),
    ),
    enabled: v.optional(v.boolean('must be true or false')),
    pricing: Pricing,
    official_pricing: v.optional(Pricing),
    routes: ModelPatchRoutes,
  },
  'must be a JSON object',
);

const ProviderId = v.pipe(
  v.string('must be a string'),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/, 'must be 1-64 characters of letters, digits and ._:/-'),
);
const EnvName = v.pipe(
  v.string('must be a string'),
  v.regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name'),
);
const BaseUrl = v.pipe(
  v.string('must be a string'),
  v.maxLength(500, 'is too long'),
  v.regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL'),
);
const ProviderFields = {
  dialect: v.optional(Text(32)),
  base_url: v.optional(BaseUrl),
  max_tokens_field: v.optional(
    v.picklist(['max_tokens', 'max_completion_tokens', 'both'], 'must be max_tokens, max_completion_tokens or both'),
  ),
  /** The environment variable to take the key from when no key is saved in the console; null: none. */
  api_key_env: v.optional(v.nullable(EnvName)),
  enabled: v.optional(v.boolean('must be true or false')),
};
export const NewProviderBody = v.object(
  { id: ProviderId, ...ProviderFields, dialect: Text(32), base_url: BaseUrl },
  'must be a JSON object',
);
export const ProviderPatchBody = v.object(ProviderFields, 'must be a JSON object');
const KeyWeight = v.pipe(
  v.number('must be a number'),
  v.integer('must be a whole number'),
  v.minValue(1, 'must be at least 1'),
  v.maxValue(1000, 'must be at most 1000'),
);
export const NewProviderKeyBody = v.object(
  {
    key: v.pipe(
      v.string('must be a string'),
      v.trim(),
      v.minLength(8, 'is too short to be an API key'),
      v.maxLength(4096, 'is too long'),
      v.regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
    ),
    label: v.optional(Text(100)),
    weight: v.optional(KeyWeight),
  },
  'must be a JSON object',
);
export const ProviderKeyPatchBody = v.object(
  {
    label: v.optional(Text(100)),
    weight: v.optional(KeyWeight),
    enabled: v.optional(v.boolean('must be true or false')),
  },
  'must be a JSON object',
);
export const ProviderTestBody = v.object({ model: v.optional(Text(200)) }, 'must be a JSON object');

export const RevenueQuery = v.object({
  days: v.optional(
    v.pipe(v.string(), v.regex(/^([1-9]|[1-9]\d|[1-3]\d\d)$/, 'must be a whole number of days from 1 to 399')),
  ),
});

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
export const CatalogueState = v.object({
  version: v.nullable(v.string()),
  source: v.picklist(['postgres', 'file']),
  saved_by: v.nullable(v.string()),
  saved_at: v.nullable(Instant),
  /**
   * The catalogue file (GATEWAY_CONFIG, ./gateway.config.json, else none: the built-in example).
   * `differs`: a saved version is in force and the file says something else, which is not served
   * until it is loaded (POST /catalogue/load-file).
   */
  file: v.object({
    path: v.nullable(v.string()),
    readable: v.boolean(),
    differs: v.boolean(),
    error: v.nullable(v.string()),
  }),
  /** What serves now: the models in service and their routes in order (provider/model). */
  in_service: v.array(v.object({ id: v.string(), routes: v.array(v.string()) })),
  /** The catalogue file's JSON, switched-off entries and upstream prices included. */
  document: v.unknown(),
});
export type CatalogueStateT = v.InferOutput<typeof CatalogueState>;
/** Failed attempts by cause (src/upstream/health.ts FAILURE_CAUSES); they add up to `errors`. */
const FailureCauses = v.object({
  no_key: v.number(),
  key_refused: v.number(),
  timeout: v.number(),
  connect: v.number(),
  rate_limited: v.number(),
  server: v.number(),
  other: v.number(),
});
const HealthWindow = v.object({
  attempts: v.number(),
  errors: v.number(),
  error_rate: v.number(),
  causes: FailureCauses,
  avg_latency_ms: v.nullable(v.number()),
  max_latency_ms: v.nullable(v.number()),
  cooldowns: v.number(),
});
export const Health = v.object({
  routes: v.array(
    v.object({
      /** provider/model */
      route: v.string(),
      in_catalogue: v.boolean(),
      cooling_until: v.nullable(Instant),
      /** The last five minutes. */
      now: HealthWindow,
      /** The last 24 hours. */
      day: HealthWindow,
      hourly: v.array(
        v.object({ hour: Instant, attempts: v.number(), errors: v.number(), avg_latency_ms: v.nullable(v.number()) }),
      ),
    }),
  ),
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

// ---- the request log (src/admin/requests.ts) ----

/** An ISO-8601 instant (or a date: midnight UTC); its calendar is checked by the handler. */
const LogInstant = v.pipe(
  v.string(),
  v.maxLength(40, 'is too long to be an instant'),
  v.regex(
    /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i,
    'must be an ISO-8601 instant such as 2025-01-31T12:00:00Z',
  ),
);
export const RequestLogQuery = v.object({
  /** A user's id, or their email address. */
  user: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(254, 'must be a user id or an email address'),
      v.regex(
        /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[^@\s]+@[^@\s]+)$/i,
        'must be a user id or an email address',
      ),
    ),
  ),
  key: v.optional(v.pipe(v.string(), v.maxLength(36, 'must be a key id'), v.uuid('must be a key id'))),
  model: v.optional(
    v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters')),
  ),
  /** provider/model of the route that answered. */
  route: v.optional(
    v.pipe(
      v.string(),
      v.minLength(3, 'must be provider/model'),
      v.maxLength(265, 'must be provider/model'),
      v.regex(/^[^/]+\/.+$/, 'must be provider/model'),
    ),
  ),
  /** One status code, or ok (2xx), error (anything else, refusals included) or refused (refused before any answer). */
  status: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^(ok|error|refused|[1-5]\d\d)$/, 'must be ok, error, refused or a status code such as 429'),
    ),
  ),
  /** Inclusive. */
  from: v.optional(LogInstant),
  /** Exclusive. */
  to: v.optional(LogInstant),
  limit: v.optional(Limit),
  /** next_cursor of the previous page, unchanged. */
  cursor: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(256, 'must be next_cursor of the previous page'),
      v.regex(/^[A-Za-z0-9_-]+$/, 'must be next_cursor of the previous page'),
    ),
  ),
});
/** The export takes the page's filters, not its paging. */
export const RequestLogExportQuery = v.object({
  user: RequestLogQuery.entries.user,
  key: RequestLogQuery.entries.key,
  model: RequestLogQuery.entries.model,
  route: RequestLogQuery.entries.route,
  status: RequestLogQuery.entries.status,
  from: RequestLogQuery.entries.from,
  to: RequestLogQuery.entries.to,
});

export const AdminRequest = v.object({
  /** The row's id; a refusal's comes from the same sequence. */
  id: v.string(),
  created_at: Instant,
  /** '' on a row that counts a minute's refusals of a key past the logging cap. */
  request_id: v.string(),
  user_id: v.string(),
  email: v.nullable(v.string()),
  key_id: v.nullable(v.string()),
  key_prefix: v.nullable(v.string()),
  key_name: v.nullable(v.string()),
  /** '' when refused before the model was read. */
  model: v.string(),
  /** provider/model that answered; null on refusals and on requests before the route was recorded. */
  route: v.nullable(v.string()),
  surface: v.string(),
  stream: v.boolean(),
  status: v.number(),
  /** Refusals only: why. */
  error_code: v.nullable(v.string()),
  /** 1, or the refusals a counting row stands for. */
  requests: v.number(),
  prompt_tokens: v.number(),
  cached_tokens: v.number(),
  completion_tokens: v.number(),
  cost_usd: Money,
  latency_ms: v.number(),
  ttft_ms: v.nullable(v.number()),
});
export const AdminRequestList = v.object({ data: v.array(AdminRequest), next_cursor: v.nullable(v.string()) });
export type AdminRequestT = v.InferOutput<typeof AdminRequest>;
export type AdminRequestListT = v.InferOutput<typeof AdminRequestList>;

export const ProviderKeyInfo = v.object({
  id: v.string(),
  label: v.string(),
  /** The last four characters: all that is shown of a key once saved. */
  hint: v.string(),
  weight: v.number(),
  enabled: v.boolean(),
  created_by: v.string(),
  created_at: Instant,
});
export const AdminProvider = v.object({
  id: v.string(),
  dialect: v.string(),
  base_url: v.string(),
  max_tokens_field: v.nullable(v.string()),
  enabled: v.boolean(),
  /** The environment variable of the catalogue entry, and whether this process has it set. */
  api_key_env: v.nullable(v.object({ name: v.string(), set: v.boolean() })),
  keys: v.array(ProviderKeyInfo),
  /** Saved keys this process cannot open (PROVIDER_KEY_SECRET unset or another one). */
  unopened_keys: v.number(),
  /** Where calls get their key now: `saved` keys, the `env` variable, `none` needed, or `missing` (every call fails). */
  key_source: v.picklist(['saved', 'env', 'none', 'missing']),
  /** Models with a route to this provider. */
  models: v.array(v.string()),
});
export const AdminProviderList = v.object({
  data: v.array(AdminProvider),
  dialects: v.array(v.string()),
  /** Whether keys can be saved here (PROVIDER_KEY_SECRET, or the embedded store's own secret). */
  can_save_keys: v.boolean(),
  catalogue_source: v.picklist(['postgres', 'file']),
});
export const ProviderTestAnswer = v.object({
  provider: v.string(),
  model: v.string(),
  results: v.array(
    v.object({
      key: v.string(),
      ok: v.boolean(),
      status: v.nullable(v.number()),
      latency_ms: v.number(),
      message: v.string(),
    }),
  ),
});
export type AdminProviderT = v.InferOutput<typeof AdminProvider>;
export type AdminProviderListT = v.InferOutput<typeof AdminProviderList>;
export type ProviderTestAnswerT = v.InferOutput<typeof ProviderTestAnswer>;
export type ProviderKeyInfoT = v.InferOutput<typeof ProviderKeyInfo>;
