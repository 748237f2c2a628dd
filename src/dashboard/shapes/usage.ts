// The dashboard API's answers about usage: the log (answered and refused requests), its totals,
// and the landing page's public figures. No Node imports: the web app takes its types from here.

import * as v from 'valibot';
import { Count, Instant, Money, NullableInstant } from '../../shape-pieces.js';

/**
 * The inference surfaces a usage record names. Written out, as src/dialects/index.ts's
 * SURFACE_NAMES is built from the dialects themselves (Node code); test/dashboard/openapi.test.ts
 * holds the two equal.
 */
export const USAGE_SURFACES = ['chat', 'messages', 'responses', 'gemini', 'embeddings'] as const;

export const UsageRecord = v.object({
  id: v.pipe(v.string(), v.regex(/^\d+$/)),
  created_at: Instant('When the request ended'),
  request_id: v.pipe(
    v.string(),
    v.description('The x-request-id the client was answered with (empty on an aggregate refusal row)'),
  ),
  model: v.pipe(
    v.string(),
    v.description(
      'Empty on a refusal before the model was read (a 402 before the body) and on an aggregate refusal row',
    ),
  ),
  key_id: v.nullable(v.pipe(v.string(), v.uuid())),
  surface: v.picklist(USAGE_SURFACES),
  stream: v.boolean(),
  status: v.pipe(v.number(), v.integer(), v.description('HTTP status given to the client (499: the client went away)')),
  prompt_tokens: Count('Prompt tokens, cached ones included'),
  completion_tokens: Count('Completion tokens'),
  cached_tokens: Count('Prompt tokens read from cache'),
  cost_usd: Money('Charged'),
  official_cost_usd: Money('At the vendor list prices'),
  latency_ms: Count('Total time'),
  ttft_ms: v.nullable(Count('Time to the first token (streams)')),
  error_code: v.nullable(
    v.pipe(
      v.string(),
      v.description(
        'Set on a request refused (or failed) before any answer, which costs $0 and no tokens: the error code it was answered with ' +
          '(insufficient_balance, model_not_found, key_rate_limit, key_spend_limit, invalid_json, invalid_request, request_too_large, …). null on answered requests.',
      ),
    ),
  ),
  requests: v.pipe(
    v.number(),
    v.integer(),
    v.minValue(1),
    v.description(
      '1; on a refusal row with an empty request_id, the refusals of its key, minute and status counted past REFUSALS_LOGGED_PER_MINUTE instead of logged one by one',
    ),
  ),
});
export const UsagePage = v.object({
  data: v.array(UsageRecord),
  next_cursor: v.nullable(v.pipe(v.string(), v.description('null on the last page'))),
});

const Totals = {
  requests: Count('Requests'),
  prompt_tokens: Count('Prompt tokens, cached ones included'),
  completion_tokens: Count('Completion (output) tokens'),
  cached_tokens: Count('Prompt tokens read from cache'),
  total_tokens: Count('prompt_tokens + completion_tokens'),
  cost_usd: Money('Charged'),
  official_cost_usd: Money('What the vendor list prices would have charged'),
  saved_usd: Money('official_cost_usd − cost_usd'),
};
export const UsageStats = v.object({
  from: NullableInstant('Start of the range applied (null: from the beginning)'),
  to: NullableInstant('End of the range applied (null: until now)'),
  ...Totals,
  by_model: v.pipe(v.array(v.object({ model: v.string(), ...Totals })), v.description('Dearest first')),
  by_day: v.pipe(
    v.array(
      v.object({
        day: v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/), v.metadata({ jsonSchema: { format: 'date' } })),
        ...Totals,
      }),
    ),
    v.description('Days with usage, oldest first'),
  ),
});

/** GET /api/public/stats: a few numbers for a landing page. */
export const PublicStats = v.object({
  models: Count('Models in the catalogue'),
  requests_24h: Count('Requests in the last 24 hours'),
  tokens_24h: Count('Tokens in the last 24 hours'),
  requests_total: Count('Requests ever'),
  tokens_total: Count('Tokens ever'),
  uptime_s: Count('Seconds since this process started'),
});

export type UsageRecordT = v.InferOutput<typeof UsageRecord>;
export type UsagePageT = v.InferOutput<typeof UsagePage>;
export type UsageStatsT = v.InferOutput<typeof UsageStats>;
export type UsageTotalsT = Omit<UsageStatsT, 'from' | 'to' | 'by_model' | 'by_day'>;
export type PublicStatsT = v.InferOutput<typeof PublicStats>;
