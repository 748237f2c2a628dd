// The caller's usage log and its totals. The log reads one user's slice of usage_records
// (answered requests) and refused_requests (refused at $0, sql/026) through their
// (user_id[, model | key_id], created_at DESC, id DESC) indexes by keyset pagination (never
// OFFSET, so page 1000 costs what page 1 does). The totals count answered requests only: they
// add up whole days from usage_daily (sql/002, kept exact by a trigger) and scan usage_records
// only for the partial days at the ends of the range, so 90 days cost about what 2 do.

import type postgres from 'postgres';
import { nanoToUsd } from '../billing/money.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import type { Sql } from '../store/sql.js';
import { CURSOR_AT_SQL, encodeCursor } from './cursor.js';
import type { Reply } from './http.js';
import { parseQuery, StatsQuery, UsageQuery, type TimeRange, type UsageFilter } from './schemas.js';
import { requireSession } from './sessions.js';
import type { UsagePageT, UsageRecordT, UsageStatsT, UsageTotalsT } from './shapes/usage.js';

export interface UsageRow {
  id: bigint;
  created_at: Date;
  cursor_at: string;
  request_id: string;
  model: string;
  key_id: string | null;
  key_name: string | null;
  surface: string;
  stream: boolean;
  status: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cost_nano: bigint;
  official_cost_nano: bigint;
  latency_ms: number;
  ttft_ms: number | null;
  /** Set on refusals (refused_requests) only. */
  error_code: string | null;
  /** 1, or on an aggregate refusal row, the refusals it counts. */
  requests: number;
  /** Read for the admin request log (src/admin/requests.ts); the user's log leaves them out. */
  user_id: string;
  key_prefix: string | null;
  /** provider/model that answered; null on refusals and on records older than sql/034. */
  route: string | null;
}

/** A piece of SQL built with the tagged template, for composing WHERE clauses. */
export type Fragment = postgres.PendingQuery<postgres.Row[]>;

/** `a AND b AND …` from fragments; no fragment at all is `true` (the admin log, unfiltered). */
export function and(sql: Sql, parts: Fragment[]): Fragment {
  if (parts.length === 0) return sql`true`;
  return parts.reduce((acc, p) => sql`${acc} AND ${p}`);
}

export function rangeConditions(sql: Sql, range: TimeRange): Fragment[] {
  const parts: Fragment[] = [];
  if (range.from) parts.push(sql`created_at >= ${range.from}`);
  if (range.to) parts.push(sql`created_at < ${range.to}`);
  return parts;
}

const DAY_MS = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * [from, to) as whole UTC days (read from usage_daily) plus up to two partial days at the ends
 * (read from usage_records). No bound means no bound: all days before `to`, or after `from`.
 */
export function splitRange(range: TimeRange): { days?: { from?: string; to?: string }; raw: TimeRange[] } {
  const from = range.from?.getTime();
  const to = range.to?.getTime();
  // First whole day starts at the first midnight at or after `from`; whole days end at the
  // last midnight at or before `to`.
  const wholeFrom = from === undefined ? undefined : Math.ceil(from / DAY_MS) * DAY_MS;
  const wholeTo = to === undefined ? undefined : Math.floor(to / DAY_MS) * DAY_MS;
  if (wholeFrom !== undefined && wholeTo !== undefined && wholeFrom >= wholeTo) {
    return { raw: from! < to! ? [range] : [] };
  }
  const raw: TimeRange[] = [];
  if (from !== undefined && from < wholeFrom!) raw.push({ from: range.from, to: new Date(wholeFrom!) });
  if (to !== undefined && wholeTo! < to) raw.push({ from: new Date(wholeTo!), to: range.to });
  return {
    days: {
      from: wholeFrom === undefined ? undefined : isoDay(wholeFrom),
      to: wholeTo === undefined ? undefined : isoDay(wholeTo),
    },
    raw,
  };
}

interface Totals {
  requests: bigint;
  prompt: bigint;
  completion: bigint;
  cached: bigint;
  cost: bigint;
  official: bigint;
}

const zero = (): Totals => ({ requests: 0n, prompt: 0n, completion: 0n, cached: 0n, cost: 0n, official: 0n });

function add(t: Totals, r: Totals): void {
  t.requests += r.requests;
  t.prompt += r.prompt;
  t.completion += r.completion;
  t.cached += r.cached;
  t.cost += r.cost;
  t.official += r.official;
}

/** Token counts are far below 2^53; money stays a decimal string. */
function totalsJson(t: Totals): UsageTotalsT {
  return {
    requests: Number(t.requests),
    prompt_tokens: Number(t.prompt),
    completion_tokens: Number(t.completion),
    cached_tokens: Number(t.cached),
    total_tokens: Number(t.prompt + t.completion),
    cost_usd: nanoToUsd(t.cost),
    official_cost_usd: nanoToUsd(t.official),
    saved_usd: nanoToUsd(t.official - t.cost),
  };
}

/** What the log is filtered by: the user's filters, and across users the admin's (src/admin/requests.ts). */
export interface LogFilter extends UsageFilter {
  /** One user's requests; absent: every user's. */
  userId?: string;
  /** provider/model that answered: answered requests only, refusals have none. */
  route?: string;
}

export type LogWhere = { answered: Fragment[] | null; refused: Fragment[] | null };

/**
 * The log's filters as conditions on each of its two tables, usage_records (answered, charged)
 * and refused_requests (refused at $0); null leaves a table out.
 */
export function logWhere(sql: Sql, q: LogFilter): LogWhere {
  const common = (): Fragment[] => {
    const where: Fragment[] = [
      ...(q.userId !== undefined ? [sql`user_id = ${q.userId}`] : []),
      ...rangeConditions(sql, q),
    ];
    if (q.model) where.push(sql`model = ${q.model}`);
    if (q.keyId) where.push(sql`key_id = ${q.keyId}`);
    return where;
  };
  const answered = common();
  if (q.route) answered.push(sql`route = ${q.route}`);
  const refused = q.route ? null : common();
  if (q.status === 'ok') return { answered: [...answered, sql`status BETWEEN 200 AND 299`], refused: null };
  // The error indexes' predicate, literally (sql/029, sql/034).
  if (q.status === 'error') return { answered: [...answered, sql`NOT (status BETWEEN 200 AND 299)`], refused };
  if (q.status === 'refused') return { answered: null, refused };
  if (q.status !== undefined) {
    // The status as a literal (a whole number, the query's schema says so; checked again here):
    // the planner then sees that an error status implies the error indexes' predicate and reads
    // the rows of that status in order (sql/040), in every plan. As a parameter beside the
    // predicate written out, the estimate multiplied "= 502" by "outside 200-299" and came out
    // fifty times too small: the first runs read all of the status's rows, of every user.
    if (!Number.isInteger(q.status)) throw new Error(`status ${q.status} is not a whole number`);
    const status = sql`status = ${sql.unsafe(String(q.status))}`;
    return { answered: [...answered, status], refused: refused && [...refused, status] };
  }
  return { answered, refused };
}

export function usageWhere(sql: Sql, userId: string, q: UsageFilter): LogWhere {
  return logWhere(sql, { ...q, userId });
}

/**
 * One page of the log, newest first, after the (created_at, id) of `after`. Both tables take
 * their ids from one sequence, so the keyset orders them as one; each is read through its own
 * (user_id[, model | key_id], created_at DESC, id DESC) index, `limit` rows at most, and merged.
 */
export function readLog(
  sql: Sql,
  userId: string,
  q: UsageFilter,
  after: { at: string; id: string } | undefined,
  limit: number,
): Promise<UsageRow[]> {
  return readLogWhere(sql, usageWhere(sql, userId, q), after, limit);
}

/** readLog over conditions of the caller's (logWhere): the admin's log across users too. */
export function readLogWhere(
  sql: Sql,
  { answered, refused }: LogWhere,
  after: { at: string; id: string } | undefined,
  limit: number,
): Promise<UsageRow[]> {
  // The bound on created_at alone says what the row comparison implies, in the form partition
  // pruning reads (sql/041): a page deep in the log skips the months after it.
  const page = (where: Fragment[]) =>
    after
      ? [
          ...where,
          sql`created_at <= ${after.at}::timestamptz`,
          sql`(created_at, id) < (${after.at}::timestamptz, ${after.id}::bigint)`,
        ]
      : where;
  const parts: Fragment[] = [];
  if (answered) {
    parts.push(sql`(
      SELECT id, created_at, request_id, user_id, model, route, key_id, surface, stream, status, prompt_tokens, completion_tokens, cached_tokens,
             cost_nano, official_cost_nano, latency_ms, ttft_ms, NULL::text AS error_code, 1 AS requests
      FROM usage_records WHERE ${and(sql, page(answered))} ORDER BY created_at DESC, id DESC LIMIT ${limit})`);
  }
  if (refused) {
    parts.push(sql`(
      SELECT id, created_at, request_id, user_id, model, NULL::text AS route, key_id, surface, stream, status, 0 AS prompt_tokens, 0 AS completion_tokens, 0 AS cached_tokens,
             0::bigint AS cost_nano, 0::bigint AS official_cost_nano, latency_ms, NULL::integer AS ttft_ms, error_code, requests
      FROM refused_requests WHERE ${and(sql, page(refused))} ORDER BY created_at DESC, id DESC LIMIT ${limit})`);
  }
  if (parts.length === 0) return Promise.resolve([]);
  return sql<UsageRow[]>`
    SELECT l.*, ${sql.unsafe(CURSOR_AT_SQL.replace(/\bcreated_at\b/g, 'l.created_at'))} AS cursor_at, k.name AS key_name, k.prefix AS key_prefix
    FROM (${parts.reduce((acc, p) => sql`${acc} UNION ALL ${p}`)}) l
    LEFT JOIN api_keys k ON k.id = l.key_id
    ORDER BY l.created_at DESC, l.id DESC
    LIMIT ${limit}`;
}

export function usageHandlers(gw: Gateway) {
  const sql = gw.sql;

  async function list(ex: Exchange): Promise<Reply> {
    const { userId } = await requireSession(gw, ex);
    const q = parseQuery(UsageQuery, ex.query);
    const rows = await readLog(sql, userId, q, q.cursor, q.limit + 1);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    const body: UsagePageT = {
      data: page.map((r) => ({
        id: r.id.toString(),
        created_at: r.created_at.toISOString(),
        request_id: r.request_id,
        model: r.model,
        key_id: r.key_id,
        // The column holds an inference surface's name: USAGE_SURFACES, which test/dashboard/openapi.test.ts holds equal to SURFACE_NAMES.
        surface: r.surface as UsageRecordT['surface'],
        stream: r.stream,
        status: r.status,
        prompt_tokens: r.prompt_tokens,
        completion_tokens: r.completion_tokens,
        cached_tokens: r.cached_tokens,
        cost_usd: nanoToUsd(r.cost_nano),
        official_cost_usd: nanoToUsd(r.official_cost_nano),
        latency_ms: r.latency_ms,
        ttft_ms: r.ttft_ms,
        error_code: r.error_code,
        requests: r.requests,
      })),
      next_cursor:
        rows.length > q.limit && last ? encodeCursor('usage', { at: last.cursor_at, id: last.id.toString() }) : null,
    };
    return { status: 200, body };
  }

  async function stats(ex: Exchange): Promise<Reply> {
    const { userId } = await requireSession(gw, ex);
    const range = parseQuery(StatsQuery, ex.query);
    const split = splitRange(range);
    // Whole UTC days from the running totals, the partial days at either end from the log;
    // both grouped by (model, day), then folded into totals, per model and per day below.
    const parts: Fragment[] = [];
    if (split.days) {
      const days: Fragment[] = [sql`user_id = ${userId}`];
      if (split.days.from) days.push(sql`day >= ${split.days.from}::date`);
      if (split.days.to) days.push(sql`day < ${split.days.to}::date`);
      parts.push(sql`
        SELECT model, to_char(day, 'YYYY-MM-DD') AS day, requests, prompt_tokens AS prompt, completion_tokens AS completion,
               cached_tokens AS cached, cost_nano::text AS cost, official_cost_nano::text AS official
        FROM usage_daily WHERE ${and(sql, days)}`);
    }
    for (const piece of split.raw) {
      parts.push(sql`
        SELECT model, to_char(day, 'YYYY-MM-DD') AS day, requests, prompt, completion, cached, cost, official FROM (
          SELECT model, (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS requests, sum(prompt_tokens) AS prompt,
                 sum(completion_tokens) AS completion, sum(cached_tokens) AS cached,
                 sum(cost_nano)::text AS cost, sum(official_cost_nano)::text AS official
          FROM usage_records WHERE ${and(sql, [sql`user_id = ${userId}`, ...rangeConditions(sql, piece)])}
          GROUP BY 1, 2) edge`);
    }
    const groups =
      parts.length === 0
        ? []
        : await sql<
            {
              model: string;
              day: string;
              requests: bigint;
              prompt: bigint;
              completion: bigint;
              cached: bigint;
              cost: string;
              official: string;
            }[]
          >`
      ${parts.reduce((acc, p) => sql`${acc} UNION ALL ${p}`)}`;
    const total = zero();
    const byModel = new Map<string, Totals>();
    const byDay = new Map<string, Totals>();
    for (const g of groups) {
      const t: Totals = {
        requests: g.requests,
        prompt: g.prompt,
        completion: g.completion,
        cached: g.cached,
        cost: BigInt(g.cost),
        official: BigInt(g.official),
      };
      add(total, t);
      if (!byModel.has(g.model)) byModel.set(g.model, zero());
      add(byModel.get(g.model)!, t);
      if (!byDay.has(g.day)) byDay.set(g.day, zero());
      add(byDay.get(g.day)!, t);
    }
    const body: UsageStatsT = {
      from: range.from?.toISOString() ?? null,
      to: range.to?.toISOString() ?? null,
      ...totalsJson(total),
      // Dearest first: what a reader of the dashboard wants to see at the top.
      by_model: [...byModel]
        .sort((a, b) => (a[1].cost === b[1].cost ? a[0].localeCompare(b[0]) : a[1].cost > b[1].cost ? -1 : 1))
        .map(([model, t]) => ({ model, ...totalsJson(t) })),
      by_day: [...byDay].sort((a, b) => a[0].localeCompare(b[0])).map(([day, t]) => ({ day, ...totalsJson(t) })),
    };
    return { status: 200, body };
  }

  return { list, stats };
}
