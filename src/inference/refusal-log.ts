// Inference requests refused (or failed unanswered) after their key was identified, for the
// user's usage log (sql/026_refused_requests.sql). They cost nothing and move no money, so they
// stay out of the outbox: each process gathers them in memory and adds them to Postgres in one
// transaction a second, as route health does.
//
// A client hammering refusals (a 402 loop at thousands a second) must not become as many rows:
// per key and minute the first REFUSALS_LOGGED_PER_MINUTE are logged one by one, across every
// process (refusal_minutes counts them in Postgres), and the rest are counted on one aggregate
// row per key, minute and status. In memory each process keeps at most that many records per key
// and minute, plus one counter per key, minute and status; past MAX_PENDING records (Postgres
// away for long) records become counts, and past MAX_AGGREGATES counts are dropped.

import type { Logger } from 'pino';
import type { Sql, Tx } from '../store/sql.js';

export interface Refusal {
  userId: string;
  keyId: string;
  requestId: string;
  /** '' when the request was refused before its model was read. */
  model: string;
  surface: string;
  stream: boolean;
  status: number;
  code: string;
  latencyMs: number;
  /** Epoch ms. */
  at: number;
}

interface Aggregate {
  userId: string;
  keyId: string;
  minute: number;
  status: number;
  code: string;
  surface: string;
  count: number;
}

export const REFUSAL_FLUSH_MS = 1000;
const MAX_PENDING = 10_000;
const MAX_AGGREGATES = 50_000;
/** refusal_minutes rows are needed for the minute they count; older ones are deleted now and then. */
const PRUNE_EVERY_MS = 60_000;

const minuteOf = (ms: number) => ms - (ms % 60_000);

export class RefusalLog {
  private minute = 0;
  /** Refusals of each key seen by this process in the current minute. */
  private seen = new Map<string, number>();
  private pending: Refusal[] = [];
  private over = new Map<string, Aggregate>();
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private lastPrune = 0;
  private lastWarn = 0;
  /** Refusals neither logged nor counted (memory bounds hit while Postgres was away). */
  dropped = 0;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    /** REFUSALS_LOGGED_PER_MINUTE; 0 turns the log off. */
    readonly perMinute: number,
  ) {}

  /** Called once per refused request: a map lookup and a push, never a store call. */
  add(r: Refusal): void {
    if (this.perMinute === 0) return;
    const minute = minuteOf(r.at);
    if (minute > this.minute) {
      this.minute = minute;
      this.seen.clear();
    }
    const n = (this.seen.get(r.keyId) ?? 0) + 1;
    this.seen.set(r.keyId, n);
    if (n <= this.perMinute && this.pending.length < MAX_PENDING) this.pending.push(r);
    else this.count(r.userId, r.keyId, minute, r.status, r.code, r.surface, 1);
  }

  private count(
    userId: string,
    keyId: string,
    minute: number,
    status: number,
    code: string,
    surface: string,
    n: number,
  ): void {
    const k = `${minute}|${keyId}|${status}`;
    const a = this.over.get(k);
    if (a) a.count += n;
    else if (this.over.size < MAX_AGGREGATES)
      this.over.set(k, { userId, keyId, minute, status, code, surface, count: n });
    else this.dropped += n;
  }

  start(): void {
    if (this.perMinute === 0) return;
    this.timer = setInterval(() => void this.flush(), REFUSAL_FLUSH_MS);
    this.timer.unref();
  }

  /** Writes what was gathered; one flush at a time. Kept for the next one if Postgres is away. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.length === 0 && this.over.size === 0) return;
    const records = this.pending;
    const over = this.over;
    this.pending = [];
    this.over = new Map();
    try {
      await this.sql.begin((tx) => this.commit(tx, records, over));
    } catch (err) {
      // Back in memory within the same bounds; records past them become counts.
      for (const r of records) {
        if (this.pending.length < MAX_PENDING) this.pending.push(r);
        else this.count(r.userId, r.keyId, minuteOf(r.at), r.status, r.code, r.surface, 1);
      }
      for (const a of over.values()) this.count(a.userId, a.keyId, a.minute, a.status, a.code, a.surface, a.count);
      const now = Date.now();
      if (now - this.lastWarn > 60_000) {
        this.lastWarn = now;
        this.log.warn(
          { err, waiting: this.pending.length, dropped: this.dropped },
          'refusal log: could not write to Postgres; kept for the next flush',
        );
      }
    }
  }

  private async commit(tx: Tx, records: Refusal[], counted: Map<string, Aggregate>): Promise<void> {
    // A copy: on failure the caller puts back what it handed in, not what this added.
    const aggregates = new Map([...counted].map(([k, a]) => [k, { ...a }]));
    // How many each key and minute may still log one by one, across processes: the upsert
    // takes the row's lock, so concurrent flushes queue and each sees the other's count.
    const groups = new Map<string, { keyId: string; minute: number; records: Refusal[] }>();
    for (const r of records) {
      const minute = minuteOf(r.at);
      const k = `${r.keyId}|${minute}`;
      let g = groups.get(k);
      if (!g) groups.set(k, (g = { keyId: r.keyId, minute, records: [] }));
      g.records.push(r);
    }
    const logged: Refusal[] = [];
    if (groups.size > 0) {
      // Row locks in one order (the ORDER BY below): concurrent flushes queue, never deadlock.
      const list = [...groups.values()];
      const counts = await tx<{ key_id: string; minute: number; logged: number }[]>`
        INSERT INTO refusal_minutes AS m (key_id, minute, logged)
        SELECT x.key_id, to_timestamp(x.minute / 1000.0), x.n
        FROM json_to_recordset(${JSON.stringify(list.map((g) => ({ key_id: g.keyId, minute: g.minute, n: g.records.length })))}::text::json)
          AS x(key_id uuid, minute bigint, n integer)
        ORDER BY 1, 2
        ON CONFLICT (key_id, minute) DO UPDATE SET logged = m.logged + EXCLUDED.logged
        RETURNING key_id, (extract(epoch FROM minute) * 1000)::bigint::float8 AS minute, logged`;
      const after = new Map(counts.map((c) => [`${c.key_id}|${c.minute}`, c.logged]));
      for (const [k, g] of groups) {
        const before = (after.get(k) ?? 0) - g.records.length;
        const room = Math.max(0, Math.min(g.records.length, this.perMinute - before));
        g.records.sort((a, b) => a.at - b.at);
        logged.push(...g.records.slice(0, room));
        for (const r of g.records.slice(room)) {
          const ak = `${g.minute}|${r.keyId}|${r.status}`;
          const a = aggregates.get(ak);
          if (a) a.count++;
          else
            aggregates.set(ak, {
              userId: r.userId,
              keyId: r.keyId,
              minute: g.minute,
              status: r.status,
              code: r.code,
              surface: r.surface,
              count: 1,
            });
        }
      }
    }
    if (logged.length > 0) {
      // A user deleted meanwhile takes their refusals with them, instead of failing the batch.
      await tx`
        INSERT INTO refused_requests (user_id, key_id, request_id, model, surface, stream, status, error_code, latency_ms, created_at)
        SELECT x.user_id, x.key_id, x.request_id, x.model, x.surface, x.stream, x.status, x.error_code, x.latency_ms, to_timestamp(x.at / 1000.0)
        FROM json_to_recordset(${JSON.stringify(
          logged.map((r) => ({
            user_id: r.userId,
            key_id: r.keyId,
            request_id: r.requestId,
            model: r.model,
            surface: r.surface,
            stream: r.stream,
            status: r.status,
            error_code: r.code,
            latency_ms: r.latencyMs,
            at: r.at,
          })),
        )}::text::json)
          AS x(user_id uuid, key_id uuid, request_id text, model text, surface text, stream boolean, status integer, error_code text, latency_ms integer, at bigint)
        WHERE EXISTS (SELECT 1 FROM users u WHERE u.id = x.user_id)
        ORDER BY x.at`;
    }
    const over = [...aggregates.values()];
    if (over.length > 0) {
      await tx`
        INSERT INTO refused_requests AS r (user_id, key_id, request_id, model, surface, stream, status, error_code, latency_ms, requests, minute, created_at)
        SELECT x.user_id, x.key_id, '', '', x.surface, false, x.status, x.error_code, 0, x.n, to_timestamp(x.minute / 1000.0), to_timestamp(x.minute / 1000.0)
        FROM json_to_recordset(${JSON.stringify(
          over.map((a) => ({
            user_id: a.userId,
            key_id: a.keyId,
            surface: a.surface,
            status: a.status,
            error_code: a.code,
            n: a.count,
            minute: a.minute,
          })),
        )}::text::json)
          AS x(user_id uuid, key_id uuid, surface text, status integer, error_code text, n integer, minute bigint)
        WHERE EXISTS (SELECT 1 FROM users u WHERE u.id = x.user_id)
        ORDER BY x.key_id, x.minute, x.status
        ON CONFLICT (key_id, minute, status) WHERE minute IS NOT NULL DO UPDATE SET requests = r.requests + EXCLUDED.requests`;
    }
    const now = Date.now();
    if (now - this.lastPrune > PRUNE_EVERY_MS) {
      this.lastPrune = now;
      await tx`DELETE FROM refusal_minutes WHERE minute < now() - interval '5 minutes'`;
    }
  }
}
