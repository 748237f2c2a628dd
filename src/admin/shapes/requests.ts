// The admin API's request log: its filters, the export's, and a page of rows
// (src/admin/requests.ts). No Node imports: the web client takes its types from here.

import * as v from 'valibot';
import { Instant, Limit, Money } from './common.js';

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
