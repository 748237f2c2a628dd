// Drains the hot store's outbox into Postgres. One writer per gateway: in the process itself, or
// in the primary when WORKERS > 1, so that a batch of a thousand records is never handled on an
// event loop that serves requests. Writers on several hosts share the work through the
// outbox's consumer group. A batch is committed in one transaction
// (rows inserted, balances and charged totals moved, per-day totals kept by the trigger) and
// only then acknowledged, so a crash at any point leaves each record either committed or still
// in the outbox, and a record delivered twice is recognised by its settle id and written once.

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AckItem, OutboxEntry, OutboxStore } from '../store/hot.js';
import type { Sql, Tx } from '../store/sql.js';
import { UsageMonths } from './usage-months.js';

const USAGE_COLUMNS_TYPED = [
  ['user_id', 'uuid'],
  ['key_id', 'uuid'],
  ['request_id', 'text'],
  ['model', 'text'],
  ['surface', 'text'],
  ['stream', 'boolean'],
  ['status', 'integer'],
  ['prompt_tokens', 'integer'],
  ['completion_tokens', 'integer'],
  ['cached_tokens', 'integer'],
  ['cache_write_tokens', 'integer'],
  ['cost_nano', 'bigint'],
  ['official_cost_nano', 'bigint'],
  ['latency_ms', 'integer'],
  ['ttft_ms', 'integer'],
  ['created_at', 'timestamptz'],
  ['settle_id', 'uuid'],
  ['outbox_ref', 'text'],
  ['charged_after_nano', 'bigint'],
  ['overrun', 'boolean'],
  ['route', 'text'],
] as const;
const USAGE_COLUMNS = USAGE_COLUMNS_TYPED.map(([c]) => c).join(', ');
const USAGE_COLUMN_TYPES = USAGE_COLUMNS_TYPED.map(([c, t]) => `${c} ${t}`).join(', ');

const HEARTBEAT_MS = 1000;
const HEARTBEAT_TTL_MS = 5000;
const CLAIM_EVERY_MS = 2000;
const BLOCK_MS = 1000;
const MAX_BACKOFF_MS = 5000;
// Records per transaction that the pause between rounds aims at. Below it, a transaction's own
// round trips and statements (the same for 1 record as for 100) are most of the writer's work
// per record; above it, the pause stays at its minimum and bursts stay as short as they are.
const BATCH_TARGET = 100;

export interface WriterObserver {
  committed?(records: number): void;
  failed?(err: unknown): void;
}

/** The lock a batch of records holds shared while it writes them (see commitBatch and reconcile). */
export const RECORDS_LOCK = 0x6169_7263; // "airc"

/** Commits outbox entries to Postgres; returns how each one fared, for the acknowledgement. */
export async function commitEntries(sql: Sql, entries: OutboxEntry[]): Promise<AckItem[]> {
  // postgres.js keeps a connection's last transaction reachable (its callback and result, through
  // the promise it races against the connection's close) until that connection runs another
  // one. The callback therefore sees the batch only through `batch`, emptied once done: a batch
  // held per pooled connection was 12,000 records in a worker's heap under load.
  const batch = { entries, items: [] as AckItem[] };
  try {
    await sql.begin((tx) => commitBatch(tx, batch));
    return batch.items;
  } finally {
    batch.entries = [];
    batch.items = [];
  }
}

/** The earliest and the latest created_at of a batch's records. */
function span(entries: OutboxEntry[]): { earliest: Date; latest: Date } {
  let lo = Infinity;
  let hi = -Infinity;
  for (const e of entries) {
    const t = e.record.createdAt.getTime();
    if (t < lo) lo = t;
    if (t > hi) hi = t;
  }
  return { earliest: new Date(lo), latest: new Date(hi) };
}

async function commitBatch(tx: Tx, batch: { entries: OutboxEntry[]; items: AckItem[] }): Promise<void> {
  const { entries, items } = batch;
  // No sequential scan where an index serves. The connection's prepared statements settle on a
  // generic plan after five runs, kept until something replans them; one made while
  // usage_records was nearly empty was a sequential scan, and with autovacuum off nothing
  // replanned it: every batch read the whole table. (Planning each batch afresh instead cost
  // more than the scan it saved: the insert's one parameter is the whole batch as JSON.)
  const userIds = [...new Set(entries.map((e) => e.record.userId))];
  const settleIds = entries.map((e) => e.record.settleId);
  // A redelivered entry carries its record's created_at unchanged, so its first copy lies within
  // the batch's span: the check reads that span's months only (sql/041), not every month's index.
  const { earliest, latest } = span(entries);
  // The three go out together (postgres.js pipelines a transaction's queries) and run in this
  // order: one round trip of the primary and of Postgres instead of three, per batch. Row locks
  // in one order: concurrent writers queue per user instead of deadlocking, and the duplicate
  // check, a statement of its own after them, sees every commit that got the lock first.
  const [, , users, existing] = await Promise.all([
    tx.unsafe('SET LOCAL enable_seqscan = off'),
    // Shared with every other writer, exclusive for `reconcile` while it reads the highest
    // record id: every id below it is then committed (reconcile.ts).
    tx`SELECT pg_advisory_xact_lock_shared(${RECORDS_LOCK})`,
    tx<{ id: string; charged_nano: bigint }[]>`
      SELECT id, charged_nano FROM users WHERE id = ANY(${userIds}::uuid[]) ORDER BY id FOR UPDATE`,
    tx<{ settle_id: string; outbox_ref: string | null; charged_after_nano: bigint | null }[]>`
      SELECT settle_id, outbox_ref, charged_after_nano FROM usage_records
      WHERE settle_id = ANY(${settleIds}::uuid[]) AND created_at BETWEEN ${earliest} AND ${latest}`,
  ]);
  const charged = new Map(users.map((u) => [u.id, u.charged_nano]));
  const seen = new Map(existing.map((r) => [r.settle_id, { ref: r.outbox_ref, after: r.charged_after_nano ?? 0n }]));

  const rows: Record<string, unknown>[] = [];
  const taken = new Map<string, bigint>();
  for (const entry of entries) {
    const r = entry.record;
    const before = charged.get(r.userId);
    if (before === undefined) {
      items.push({ entry, kind: 'dropped', chargedAfter: 0n });
      continue;
    }
    const prior = seen.get(r.settleId);
    if (prior) {
      items.push(
        prior.ref === entry.id
          ? { entry, kind: 'redelivered', chargedAfter: prior.after }
          : { entry, kind: 'duplicate', chargedAfter: 0n },
      );
      continue;
    }
    const after = before + r.costNano;
    charged.set(r.userId, after);
    seen.set(r.settleId, { ref: entry.id, after });
    taken.set(r.userId, (taken.get(r.userId) ?? 0n) + r.costNano);
    items.push({ entry, kind: 'inserted', chargedAfter: after });
    rows.push({
      user_id: r.userId,
      key_id: r.keyId,
      request_id: r.requestId,
      model: r.model,
      surface: r.surface,
      stream: r.stream,
      status: r.status,
      prompt_tokens: r.promptTokens,
      completion_tokens: r.completionTokens,
      cached_tokens: r.cachedTokens,
      cache_write_tokens: r.cacheWriteTokens,
      cost_nano: r.costNano.toString(),
      official_cost_nano: r.officialCostNano.toString(),
      latency_ms: r.latencyMs,
      ttft_ms: r.ttftMs,
      created_at: r.createdAt,
      settle_id: r.settleId,
      outbox_ref: entry.id,
      charged_after_nano: after.toString(),
      overrun: r.overrun,
      route: r.route ?? null,
    });
  }
  if (rows.length === 0) return;
  const ids = [...taken.keys()];
  const amounts = ids.map((id) => taken.get(id)!.toString());
  // Pipelined: nothing between them depends on another's answer. A key's last use is kept by
  // the insert's trigger (sql/042), not here.
  await Promise.all([
    // One JSON parameter instead of twenty per row: serializing thousands of parameters a
    // second was a visible share of the gateway's CPU; JSON.stringify is native.
    tx`
      INSERT INTO usage_records (${tx.unsafe(USAGE_COLUMNS)})
      SELECT ${tx.unsafe(USAGE_COLUMNS)} FROM json_to_recordset(${JSON.stringify(rows)}::text::json)
        AS r(${tx.unsafe(USAGE_COLUMN_TYPES)})`,
    tx`
      UPDATE users u SET balance_nano = u.balance_nano - d.amount, charged_nano = u.charged_nano + d.amount
      FROM (SELECT unnest(${ids}::uuid[]) AS id, unnest(${amounts}::bigint[]) AS amount) d
      WHERE u.id = d.id`,
  ]);
}

/** The writer with the gateway's settings. */
export function gatewayWriter(
  sql: Sql,
  hot: OutboxStore,
  log: Logger,
  config: { USAGE_BATCH_MAX: number; USAGE_FLUSH_MS: number; USAGE_FLUSH_MAX_MS: number },
  observer?: WriterObserver,
): OutboxWriter {
  return new OutboxWriter(sql, hot, log, {
    batchMax: config.USAGE_BATCH_MAX,
    // Where answers wait for their record's commit (the embedded store), the writer never
    // pauses: records that arrive during a commit make the next batch by themselves.
    pauseMs: hot.durableSettle ? config.USAGE_FLUSH_MS : 0,
    maxPauseMs: config.USAGE_FLUSH_MAX_MS,
    observer,
  });
}

/**
 * The pause after a round that was not full: the one that would have gathered BATCH_TARGET
 * records at the rate the last round's came in (they gathered over the last pause), kept
 * between USAGE_FLUSH_MS and USAGE_FLUSH_MAX_MS. At a few hundred records a second that makes a
 * few transactions a second instead of twenty; where the shortest pause already gathers more,
 * it stays at the shortest.
 */
export class RoundPacer {
  ms: number;
  private readonly max: number;

  constructor(
    private readonly min: number,
    max: number,
  ) {
    this.ms = min;
    this.max = Math.max(min, max);
  }

  after(read: number): number {
    const wanted = Math.round((this.ms * BATCH_TARGET) / Math.max(read, 1));
    this.ms = Math.min(this.max, Math.max(this.min, wanted));
    return this.ms;
  }
}

export class OutboxWriter {
  readonly consumer = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  /** Records committed since start, for tests and metrics. */
  written = 0;
  private running = false;
  private loop?: Promise<void>;
  private timers: NodeJS.Timeout[] = [];
  private failures = 0;
  private lastErrorLog = 0;
  /** Cuts the pause between rounds short (at stop). */
  private wake?: () => void;

  constructor(
    private readonly sql: Sql,
    private readonly hot: OutboxStore,
    private readonly log: Logger,
    private readonly opts: { batchMax: number; pauseMs: number; maxPauseMs?: number; observer?: WriterObserver },
  ) {
    this.pacer = new RoundPacer(opts.pauseMs, opts.maxPauseMs ?? opts.pauseMs);
    this.months = new UsageMonths(sql, log);
  }

  private readonly months: UsageMonths;

  /** The pause between rounds while the outbox is nearly empty. */
  readonly pacer: RoundPacer;

  start(): void {
    if (this.running) return;
    this.running = true;
    const beat = () => this.hot.heartbeat(this.consumer, HEARTBEAT_TTL_MS).catch(() => {});
    const claim = () =>
      this.hot.claimAbandoned(this.consumer).then(
        (n) => n > 0 && this.log.info({ claimed: n }, 'outbox: took over the records of a stopped writer'),
        () => {},
      );
    void beat().then(claim);
    this.timers.push(setInterval(beat, HEARTBEAT_MS), setInterval(claim, CLAIM_EVERY_MS));
    for (const t of this.timers) t.unref();
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const read = await this.step(BLOCK_MS);
      // A batch that was not full means the outbox is nearly empty: let a few records gather,
      // one transaction for many instead of one each.
      if (this.running && read < this.opts.batchMax && this.opts.pauseMs > 0 && this.failures === 0)
        await this.pause(this.pacer.after(read));
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  /** One read-commit-acknowledge round; how many records it read (0 when it failed). */
  private async step(blockMs: number): Promise<number> {
    let entries: OutboxEntry[] = [];
    try {
      entries = await this.hot.readOutbox(this.consumer, this.opts.batchMax, blockMs);
      if (entries.length === 0) return 0;
      await this.months.cover(span(entries).latest);
      const items = await commitEntries(this.sql, entries);
      await this.hot.ackOutbox(items);
      this.written += items.filter((i) => i.kind === 'inserted').length;
      this.opts.observer?.committed?.(entries.length);
      this.failures = 0;
      return entries.length;
    } catch (err) {
      // The records stay in the outbox (unacknowledged, ours): retried with backoff. A commit
      // that did land but was not acknowledged is recognised as a redelivery next time.
      this.failures++;
      this.opts.observer?.failed?.(err);
      const now = Date.now();
      if (now - this.lastErrorLog > 5000) {
        this.lastErrorLog = now;
        this.log.error(
          { err, waiting: entries.length, attempt: this.failures },
          'outbox: writing usage to Postgres failed; will retry',
        );
      }
      await this.pause(Math.min(MAX_BACKOFF_MS, 50 * 2 ** Math.min(this.failures, 7)));
      return 0;
    }
  }

  /** Resolves once the outbox is empty (every record committed), or throws after `timeoutMs`. */
  async drained(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await this.hot.outboxLength()) > 0) {
      if (Date.now() > deadline) throw new Error(`the outbox did not drain within ${timeoutMs} ms`);
      // Whoever waits for the drain does not wait out a pause meant to gather records.
      this.wake?.();
      await sleep(10);
    }
  }

  /** Stops after the batch in hand, then writes what is left, for up to `timeoutMs`. */
  async stop(timeoutMs = 5000): Promise<void> {
    if (!this.running) return;
    this.running = false;
    for (const t of this.timers) clearInterval(t);
    this.wake?.();
    await this.loop;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const length = await this.hot.outboxLength().catch(() => 0);
      if (length === 0) break;
      await this.step(0);
      if (this.failures > 0) break; // Postgres is down: the records wait in the outbox for the next start
    }
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
