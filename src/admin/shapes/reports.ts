// The admin API's reports: the routes' health and the revenue (src/admin/reports.ts). No Node
// imports: the web client takes its types from here.

import * as v from 'valibot';
import { Instant, Money } from './common.js';

export const RevenueQuery = v.object({
  days: v.optional(
    v.pipe(v.string(), v.regex(/^([1-9]|[1-9]\d|[1-3]\d\d)$/, 'must be a whole number of days from 1 to 399')),
  ),
});

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
