// /api/admin/requests and /api/admin/requests/export: the request log across users, by user,
// key, model, route, status and time, newest first, as JSON pages or streamed CSV.
//
// It is the user's usage log (src/dashboard/usage.ts) without the one-user bound: the same two
// tables merged by one (created_at, id) keyset, answered requests (usage_records) and refusals
// (refused_requests: a 402, a 429, a failure before any answer; at $0, with no route). Refusals
// are in because an operator asked "why did this user's requests fail" expects to see them; a
// route filter leaves them out, as they have none.
//
// Every single filter is read through an index ending in (created_at DESC, id DESC), so a page
// costs the same at a year of data as on the first day: a user, and a key (its owner is looked
// up, then the per-user indexes of sql/001), model and route (sql/034), an error status (the
// partial error indexes of sql/034). Without a filter, or with a 2xx status, the time index is
// walked, where nearly every row matches.

import { nanoToUsd } from '../billing/money.js';
import { decodeCursor, encodeCursor, type Cursor } from '../dashboard/cursor.js';
import { badRequest } from '../dashboard/errors.js';
import type { Reply } from '../dashboard/http.js';
import { parseInstant, type UsageStatus } from '../dashboard/schemas.js';
import { csvBatches } from '../dashboard/usage-export.js';
import { logWhere, readLogWhere, type LogFilter, type LogWhere, type UsageRow } from '../dashboard/usage.js';
import type { Exchange } from '../server/exchange.js';
import type { Gateway } from '../services.js';
import type { Sql } from '../store/sql.js';
import { query } from './http.js';
import { RequestLogExportQuery, RequestLogQuery, type AdminRequestListT, type AdminRequestT } from './shapes.js';

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;
/** An export stops here: a narrower time range gets the rest. */
export const REQUEST_EXPORT_MAX_ROWS = 1_000_000;

const COLUMNS = [
  'created_at',
  'request_id',
  'user_id',
  'email',
  'key_id',
  'key_prefix',
  'key_name',
  'model',
  'route',
  'surface',
  'stream',
  'status',
  'error_code',
  'requests',
  'prompt_tokens',
  'cached_tokens',
  'completion_tokens',
  'cost_usd',
  'latency_ms',
  'ttft_ms',
  'id',
] as const;

type Filters = { [K in keyof typeof RequestLogExportQuery.entries]?: string };

function instant(name: 'from' | 'to', text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const d = parseInstant(text);
  if (!d)
    throw badRequest(
      'invalid_range',
      `Query parameter "${name}" is not a date that exists (e.g. 2025-01-31T12:00:00Z).`,
      { param: name, reason: 'invalid_date' },
    );
  return d;
}

/**
 * The query's filters as the log's conditions; null when they cannot match anything (an unknown
 * email or key, a key of another user than the one asked for), which is an empty log, not an error.
 */
async function resolve(sql: Sql, q: Filters): Promise<LogWhere | null> {
  const from = instant('from', q.from);
  const to = instant('to', q.to);
  if (from && to && from.getTime() > to.getTime())
    throw badRequest('invalid_range', '"from" must not be after "to".', { param: 'from', reason: 'disordered_range' });
  let userId: string | undefined;
  if (q.user !== undefined) {
    if (q.user.includes('@')) {
      const [u] = await sql<{ id: string }[]>`SELECT id FROM users WHERE email = ${q.user.trim().toLowerCase()}`;
      if (!u) return null;
      userId = u.id;
    } else {
      userId = q.user.toLowerCase();
    }
  }
  const keyId = q.key?.toLowerCase();
  if (keyId) {
    // A key is one user's: with its owner named too, the per-user (user_id, key_id, …) indexes
    // serve the filter; a key alone has no index of its own across users.
    const [k] = await sql<{ user_id: string }[]>`SELECT user_id FROM api_keys WHERE id = ${keyId}`;
    if (!k || (userId !== undefined && k.user_id !== userId)) return null;
    userId = k.user_id;
  }
  const status: UsageStatus | undefined =
    q.status === undefined ? undefined : /^\d+$/.test(q.status) ? Number(q.status) : (q.status as UsageStatus);
  const filter: LogFilter = { userId, keyId, model: q.model, route: q.route, status, from, to };
  return logWhere(sql, filter);
}

/** The page's rows with their owners' addresses: one lookup for at most a page of users. */
async function withEmails(sql: Sql, rows: UsageRow[]): Promise<(UsageRow & { email: string | null })[]> {
  const ids = [...new Set(rows.map((r) => r.user_id))];
  const emails = new Map(
    ids.length === 0
      ? []
      : (await sql<{ id: string; email: string }[]>`SELECT id, email FROM users WHERE id = ANY(${ids}::uuid[])`).map(
          (u) => [u.id, u.email],
        ),
  );
  return rows.map((r) => ({ ...r, email: emails.get(r.user_id) ?? null }));
}

const json = (r: UsageRow & { email: string | null }): AdminRequestT => ({
  id: r.id.toString(),
  created_at: r.created_at.toISOString(),
  request_id: r.request_id,
  user_id: r.user_id,
  email: r.email,
  key_id: r.key_id,
  key_prefix: r.key_prefix,
  key_name: r.key_name,
  model: r.model,
  route: r.route,
  surface: r.surface,
  stream: r.stream,
  status: r.status,
  error_code: r.error_code,
  requests: r.requests,
  prompt_tokens: r.prompt_tokens,
  cached_tokens: r.cached_tokens,
  completion_tokens: r.completion_tokens,
  cost_usd: nanoToUsd(r.cost_nano),
  latency_ms: r.latency_ms,
  ttft_ms: r.ttft_ms,
});

export function requestLogHandlers(gw: Gateway) {
  const sql = gw.sql;

  async function list(ex: Exchange): Promise<Reply> {
    const q = query(ex, RequestLogQuery);
    const limit = Math.min(MAX_PAGE, q.limit ? Number(q.limit) : DEFAULT_PAGE);
    let after: Cursor | undefined;
    if (q.cursor !== undefined) {
      after = decodeCursor('requests', q.cursor) ?? undefined;
      if (!after)
        throw badRequest(
          'invalid_cursor',
          'Query parameter "cursor" is not a cursor from this list (pass its next_cursor back unchanged).',
          { param: 'cursor', reason: 'invalid_cursor' },
        );
    }
    const where = await resolve(sql, q);
    const rows = where ? await readLogWhere(sql, where, after, limit + 1) : [];
    const page = await withEmails(sql, rows.slice(0, limit));
    const last = page.at(-1);
    const body: AdminRequestListT = {
      data: page.map(json),
      next_cursor:
        rows.length > limit && last ? encodeCursor('requests', { at: last.cursor_at, id: last.id.toString() }) : null,
    };
    return { status: 200, body };
  }

  async function exportCsv(ex: Exchange): Promise<Reply> {
    const q = query(ex, RequestLogExportQuery);
    // Resolved before the answer starts: a bad filter is a 400, not a broken file.
    const where = await resolve(sql, q);
    const read = async (after: Cursor | undefined, limit: number) =>
      where ? withEmails(sql, await readLogWhere(sql, where, after, limit)) : [];
    const csv = csvBatches(
      COLUMNS,
      read,
      (r) => {
        const j = json(r);
        return [
          j.created_at,
          j.request_id,
          j.user_id,
          j.email,
          j.key_id,
          j.key_prefix,
          j.key_name,
          j.model,
          j.route,
          j.surface,
          j.stream,
          j.status,
          j.error_code,
          j.requests,
          j.prompt_tokens,
          j.cached_tokens,
          j.completion_tokens,
          j.cost_usd,
          j.latency_ms,
          j.ttft_ms,
          j.id,
        ];
      },
      REQUEST_EXPORT_MAX_ROWS,
    );
    const stamp = new Date().toISOString().slice(0, 19).replace(/:/g, '');
    return {
      status: 200,
      stream: csv,
      headers: {
        'content-type': 'text/csv; charset=utf-8',
        'content-disposition': `attachment; filename="requests-${stamp}Z.csv"`,
      },
    };
  }

  return { list, exportCsv };
}
