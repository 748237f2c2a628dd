// Reserve before forwarding, settle after: the hot-store side of every request's money.

import { randomFillSync } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { GatewayError } from '../errors.js';
import { Batcher, Coalesced } from '../store/batch.js';
import type { HotBalance, HotStore, OutboxRecord, PrimeSnapshot, ReserveResult, SettleResult } from '../store/hot.js';
import type { Sql } from '../store/sql.js';
import {
  periodEnd,
  periodStart,
  previousSpendField,
  spendField,
  type KeyLimits,
  type SpendPeriod,
} from './key-limits.js';
import { Lease, Leases, type LeaseObserver } from './leases.js';
import { usdText } from './money.js';

export interface Reservation {
  id: string;
  userId: string;
  keyId: string;
  limits: KeyLimits;
  amount: bigint;
  settled: boolean;
  /** The lease this request's worst case was drawn from, instead of a hold of its own. */
  lease?: Lease;
  /** Its draw was given back to the lease (once, whatever became of the settle). */
  returned?: boolean;
}

export interface Payer {
  userId: string;
  keyId: string;
  limits: KeyLimits;
}

const SETTLE_RETRY_PAUSE_MS = 100;
const KNOWN_MAX = 100_000;

export interface LedgerOptions {
  ttlMs: number;
  /** Refuse new requests (503) once this many records wait for Postgres; 0 = no bound. */
  outboxMax: number;
  /** The embedded store: how long a settle may wait for its write-ahead commit. */
  commitWaitMs?: number;
  /**
   * How long an answer in hand keeps trying to have its charge taken (settle) while the hot
   * store cannot be reached, before it is refused with 503. A settle that failed may have
   * landed all the same (its reply was lost with a dying connection, a master that failed
   * over): tried again, it lands or is found landed, and the answer is delivered, instead of a
   * 503 that was charged. Covers a Redis Cluster failover; 0 tries once.
   */
  settleWaitMs?: number;
  log?: Logger;
  onRetryQueue?: (size: number) => void;
  /**
   * Leases (src/billing/leases.ts): requests of keys without limits take their worst case from a
   * standing hold of this process, renewed at least every `windowMs`, topped up to `requests`
   * worst cases. Absent: every request reserves in the store.
   */
  leases?: { windowMs: number; requests: number; observer?: LeaseObserver; clock?: Clock; soloFirst?: boolean };
}

const unavailable = () =>
  new GatewayError('unavailable', 'The gateway cannot check balances right now; try again shortly.');
const backlog = () => new GatewayError('unavailable', 'The gateway cannot record usage right now; try again shortly.');
const insufficient = (amount: bigint, available: bigint) =>
  new GatewayError(
    'insufficient_balance',
    `Insufficient balance: this request may cost up to $${usdText(amount)} but $${usdText(available < 0n ? 0n : available)} is available. Add funds or lower max_tokens.`,
  );

/** Random bytes for ids, drawn a page at a time: one call into the CSPRNG per 256 ids. */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/**
 * A new reservation's id: a UUIDv7 (RFC 9562), the time in ms first, then 74 random bits. It is
 * the usage record's `settle_id`, uniquely indexed: ids in time order are added at the end of
 * that index, where random ones each landed on a page of their own among 20M records (one random
 * page read and written per record, as much as the record's own row).
 * Held for as long as its request lasts: reading a character flattens the string (a rope of
 * its pieces otherwise, several times the size), and the check uses the result so that no
 * optimiser drops the read.
 */
export function reservationId(now = Date.now()): string {
  if (poolAt + 10 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const b = Buffer.allocUnsafe(16);
  b.writeUIntBE(now, 0, 6);
  pool.copy(b, 6, poolAt, poolAt + 10);
  poolAt += 10;
  b[6] = 0x70 | (b[6]! & 0x0f);
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = b.toString('hex');
  const id = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  if (id.charCodeAt(8) !== 0x2d) throw new Error(`"${id}" is not a UUID`);
  return id;
}

export class Ledger {
  /**
   * Settles (and releases) that failed because the hot store was unreachable: tried again until
   * they land, so a delivered answer is billed and a hold does not linger for its whole TTL.
   */
  private readonly retries = new Map<string, { res: Reservation; cost: bigint; record?: OutboxRecord }>();
  private retryTimer?: NodeJS.Timeout;
  /** Users seen with money available in the last second: their requests skip the pre-check. */
  private readonly funded = new Map<string, number>();
  /** Users this process has asked the hot store about (at most KNOWN_MAX, then forgotten at once). */
  private readonly known = new Set<string>();
  /** A cold account met by many requests at once is loaded once for all of them. */
  private readonly priming = new Coalesced(async (userId) =>
    this.hot.primeBalance(userId, await this.snapshots.call(userId)),
  );
  /** Cold accounts met in one event-loop turn are read in one snapshot (a burst of new users). */
  private readonly snapshots = new Batcher<string, PrimeSnapshot>((userIds) => this.load(userIds));
  private readonly leases?: Leases;

  constructor(
    private readonly sql: Sql,
    private readonly hot: HotStore,
    private readonly opts: LedgerOptions,
  ) {
    if (opts.leases) {
      this.leases = new Leases(hot, { ...opts.leases, ttlMs: opts.ttlMs, outboxMax: opts.outboxMax });
      this.leases.start();
    }
  }

  /** Hold `amount` or refuse: 402 (balance), 429 (key limits), 503 (stores). */
  async reserve(payer: Payer, amount: bigint): Promise<Reservation> {
    // A key's limits are counted per request in the store: only keys without them lease.
    if (this.leases && !payer.limits.rpm && payer.limits.spendNano === null && this.leases.wants(payer.userId))
      return this.draw(this.leases, payer, amount);
    const id = reservationId();
    const now = new Date();
    const { limits } = payer;
    const req = {
      userId: payer.userId,
      reservationId: id,
      amount,
      ttlMs: this.opts.ttlMs,
      keyId: payer.keyId,
      rpmLimit: limits.rpm ?? 0,
      spend:
        limits.spendNano !== null && limits.spendPeriod
          ? { limit: limits.spendNano, field: spendField(payer.keyId, limits.spendPeriod, now) }
          : undefined,
      outboxMax: this.opts.outboxMax,
    };
    let result: ReserveResult;
    try {
      result = await this.hot.reserve(req);
      if (result.status === 'unknown') {
        await this.prime(payer.userId);
        result = await this.hot.reserve(req);
      }
    } catch (err) {
      // A store that cannot be reached is the gateway's trouble (503, readyz says which one),
      // not an internal error.
      this.opts.log?.warn({ err: (err as Error)?.message }, 'reserve failed: a store is unreachable');
      throw unavailable();
    }
    switch (result.status) {
      case 'ok':
        if (result.available > 0n) this.noteFunded(payer.userId);
        return { id, userId: payer.userId, keyId: payer.keyId, limits, amount, settled: false };
      case 'insufficient':
        throw insufficient(amount, result.available);
      case 'rate_limited':
        throw new GatewayError('rate_limit', `This key is limited to ${limits.rpm} requests per minute.`, {
          retryAfter: Math.max(1, Math.ceil(result.retryAfterMs / 1000)),
          code: 'key_rate_limit',
        });
      case 'key_limit':
        throw keySpendError(limits.spendNano!, limits.spendPeriod!, result.spent, amount, now);
      case 'backlog':
        throw backlog();
      default:
        throw unavailable();
    }
  }

  private async draw(leases: Leases, payer: Payer, amount: bigint): Promise<Reservation> {
    const { userId } = payer;
    let drawn;
    try {
      drawn = await leases.draw(userId, amount, async () => void (await this.prime(userId)));
    } catch (err) {
      this.opts.log?.warn({ err: (err as Error)?.message }, 'lease failed: a store is unreachable');
      throw unavailable();
    }
    if (drawn instanceof Lease) {
      if (drawn.free > 0n) this.noteFunded(userId);
      return {
        id: reservationId(),
        userId,
        keyId: payer.keyId,
        limits: payer.limits,
        amount,
        settled: false,
        lease: drawn,
      };
    }
    switch (drawn.status) {
      case 'insufficient':
        throw insufficient(amount, drawn.available);
      case 'backlog':
        throw backlog();
      default:
        throw unavailable();
    }
  }

  /**
   * The cheap check before a body is read and parsed: nothing available (an empty or overdrawn
   * balance) is a 402 at once. One hot-store read, skipped for users seen funded within the
   * last second (their reserve checks again anyway).
   */
  async precheck(payer: Payer): Promise<void> {
    const now = Date.now();
    if ((this.funded.get(payer.userId) ?? 0) > now) return;
    let b;
    try {
      b = await this.balance(payer.userId);
    } catch (err) {
      this.opts.log?.warn({ err: (err as Error)?.message }, 'balance check failed: a store is unreachable');
      throw unavailable();
    }
    if (b.available <= 0n) {
      throw new GatewayError(
        'insufficient_balance',
        `Insufficient balance: $${usdText(b.available < 0n ? 0n : b.available)} is available. Add funds to use the API.`,
      );
    }
    this.noteFunded(payer.userId, now);
  }

  /** count_tokens and other unbilled calls: a positive balance, and they count against the key's rpm. */
  async gate(payer: Payer): Promise<void> {
    let r;
    try {
      r = await this.hot.gate(payer.userId, payer.keyId, payer.limits.rpm ?? 0);
      if (r === 'unknown') {
        await this.prime(payer.userId);
        r = await this.hot.gate(payer.userId, payer.keyId, payer.limits.rpm ?? 0);
      }
    } catch {
      throw unavailable();
    }
    if (r === 'insufficient' || r === 'unknown')
      throw new GatewayError('insufficient_balance', 'Insufficient balance: add funds to use the API.');
    if (typeof r === 'object') {
      throw new GatewayError('rate_limit', `This key is limited to ${payer.limits.rpm} requests per minute.`, {
        retryAfter: Math.max(1, Math.ceil(r.retryAfterMs / 1000)),
        code: 'key_rate_limit',
      });
    }
  }

  private noteFunded(userId: string, now = Date.now()) {
    if (this.funded.size > 100_000) this.funded.clear();
    this.funded.set(userId, now + 1000);
  }

  /**
   * Charge the actual cost and release the rest; the usage record goes to the outbox in the
   * same step. Returns what was charged (0 for a repeat). Throws 503 when the store is down.
   */
  async settle(res: Reservation, cost: bigint, record: OutboxRecord): Promise<bigint> {
    if (res.settled) return 0n;
    const until = Date.now() + (this.opts.settleWaitMs ?? 0);
    for (;;) {
      try {
        const charged = await this.trySettle(res, cost, record);
        res.settled = true;
        return charged;
      } catch (err) {
        // Idempotent per reservation: a try that landed unseen makes the next one a repeat.
        if (Date.now() >= until) throw err;
        await new Promise((r) => setTimeout(r, SETTLE_RETRY_PAUSE_MS));
      }
    }
  }

  /**
   * Like settle, for an answer already delivered: if the store is down, the charge is kept and
   * tried again until it lands, so what was served is billed once the store is back. The
   * reservation counts as settled from here on either way: the retry owns it.
   */
  async settleEventually(res: Reservation, cost: bigint, record: OutboxRecord): Promise<boolean> {
    if (res.settled) return true;
    res.settled = true;
    try {
      await this.trySettle(res, cost, record);
      return true;
    } catch {
      this.retryLater(res, cost, record);
      return false;
    }
  }

  /** Release a hold that was not used: nothing charged, nothing recorded. */
  async release(res: Reservation): Promise<void> {
    if (res.settled) return;
    res.settled = true;
    if (res.lease) {
      // Nothing was used: the worst case goes back to the lease, no store call. (After a settle
      // that failed, it went back already, cost included.)
      this.giveBack(res, 0n);
      return;
    }
    try {
      await this.trySettle(res, 0n);
    } catch {
      this.retryLater(res, 0n);
    }
  }

  private retryLater(res: Reservation, cost: bigint, record?: OutboxRecord) {
    this.retries.set(res.id, { res, cost, record });
    this.opts.onRetryQueue?.(this.retries.size);
    this.retryTimer ??= setInterval(() => void this.retryPending(), 1000);
  }

  private async trySettle(res: Reservation, cost: bigint, record?: OutboxRecord): Promise<bigint> {
    let result;
    try {
      result = await this.hot.settle(this.settleRequest(res, cost, record));
    } catch (err) {
      // It may have landed: the lease counts the cost as spent either way (see leases.ts).
      this.giveBack(res, cost);
      this.suspendLeases();
      this.opts.log?.warn({ err: (err as Error)?.message }, 'settle failed: the hot store is unreachable');
      throw unavailable();
    }
    this.giveBack(res, cost, result);
    if (result.duplicate) return 0n;
    if (!this.hot.durableSettle && result.entryId) await this.awaitCommit(result.entryId);
    return cost;
  }

  /** The hot store lost data (or could not be reached): no lease is drawn from before a store call renews it. */
  suspendLeases(): void {
    this.leases?.suspend();
  }

  /** Charges waiting for the store to come back. */
  get pendingSettles(): number {
    return this.retries.size;
  }

  async retryPending(): Promise<void> {
    for (const [id, job] of this.retries) {
      try {
        await this.trySettle(job.res, job.cost, job.record);
        this.retries.delete(id);
      } catch {
        break; // still down
      }
    }
    this.opts.onRetryQueue?.(this.retries.size);
    if (this.retries.size === 0 && this.retryTimer) {
      clearInterval(this.retryTimer);
      this.retryTimer = undefined;
    }
  }

  /** Called at shutdown: one last try; what still cannot land is logged in full. */
  async stop(): Promise<void> {
    if (this.retries.size > 0) await this.retryPending();
    await this.leases?.stop();
    if (this.retryTimer) clearInterval(this.retryTimer);
    for (const { record } of this.retries.values()) {
      if (record)
        this.opts.log?.error(
          {
            record: { ...record, costNano: String(record.costNano), officialCostNano: String(record.officialCostNano) },
          },
          'unsettled charge lost at shutdown',
        );
    }
  }

  private giveBack(res: Reservation, cost: bigint, result?: SettleResult) {
    if (!res.lease || res.returned) return;
    res.returned = true;
    this.leases!.settled(res.lease, res.amount, cost, result);
  }

  private settleRequest(res: Reservation, cost: bigint, record?: OutboxRecord) {
    const p = record && res.limits.spendNano !== null ? res.limits.spendPeriod : null;
    return {
      userId: res.userId,
      reservationId: res.id,
      leaseId: res.lease?.id,
      cost,
      keyId: res.keyId,
      spendField: p ? spendField(res.keyId, p, record!.createdAt) : undefined,
      spendFieldBefore: p ? previousSpendField(res.keyId, p, record!.createdAt) : undefined,
      record,
    };
  }

  private async awaitCommit(entryId: string): Promise<void> {
    const ms = this.opts.commitWaitMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.hot.whenCommitted(entryId),
        new Promise((_, reject) => (timer = setTimeout(() => reject(unavailable()), ms))),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Load a user's account from one Postgres snapshot: the balance, the running total of
   * committed charges (which tells the outbox's acknowledgements what the snapshot already
   * holds) and the current-period spend of each capped key.
   */
  /** Loads the account from Postgres if it is not loaded: what it loaded, or null if it was. */
  prime(userId: string): Promise<HotBalance | null> {
    return this.priming.call(userId);
  }

  private async load(userIds: string[]): Promise<PrimeSnapshot[]> {
    const now = new Date();
    // Each capped key's spend in its current period, from the per-key daily totals (kept with
    // the records, sql/029): a period starts at a UTC midnight, so whole days sum it exactly.
    const start = (period: SpendPeriod) => periodStart(period, now).toISOString().slice(0, 10);
    // One statement, so one snapshot for the balance, the charged total and the caps' spend,
    // without a transaction's three extra round trips.
    const rows = await this.sql<
      {
        id: string;
        balance_nano: bigint;
        charged_nano: bigint;
        caps: { id: string; period: SpendPeriod; spent: string }[];
      }[]
    >`
      SELECT u.id, u.balance_nano, u.charged_nano,
             coalesce((SELECT json_agg(json_build_object('id', k.id, 'period', k.spend_limit_period, 'spent',
                 coalesce((SELECT sum(d.cost_nano) FROM usage_key_daily d WHERE d.key_id = k.id AND d.day >= (CASE k.spend_limit_period
                   WHEN 'day' THEN ${start('day')} WHEN 'week' THEN ${start('week')} WHEN 'month' THEN ${start('month')} ELSE ${start('total')} END)::date), 0)::text))
               FROM api_keys k WHERE k.user_id = u.id AND k.spend_limit_nano IS NOT NULL AND k.spend_limit_period IS NOT NULL), '[]'::json) AS caps
      FROM users u WHERE u.id = ANY(${userIds}::uuid[])`;
    const byUser = new Map(rows.map((u) => [u.id, u]));
    return userIds.map((id) => {
      const u = byUser.get(id);
      const keySpend: Record<string, bigint> = {};
      for (const k of u?.caps ?? []) keySpend[spendField(k.id, k.period, now)] = BigInt(k.spent);
      return { balance: u?.balance_nano ?? 0n, charged: u?.charged_nano ?? 0n, keySpend };
    });
  }

  /**
   * Balance, live reservations and what is available, loading the account if needed. What this
   * process's lease holds undrawn is available here, not reserved (the leases of other processes
   * count as reserved until they are handed back, a window after their last request).
   */
  async balance(userId: string): Promise<{ balance: bigint; reserved: bigint; available: bigint }> {
    // A user this process has not met is loaded first: usually nobody has (a new key, a burst of
    // them), and the load answers the balance, a read less. An account loaded already costs a
    // snapshot read here, once per process.
    if (!this.known.has(userId)) {
      if (this.known.size >= KNOWN_MAX) this.known.clear();
      this.known.add(userId);
      const loaded = await this.prime(userId);
      if (loaded && loaded.reserved === 0n) return this.available(userId, loaded);
    }
    let b = await this.hot.balance(userId);
    if (!b) {
      // What the load found is the balance, unless holds are counted (expired ones are swept by
      // the read) or another process loaded it first: a read less for a new account.
      const loaded = await this.prime(userId);
      b =
        loaded && loaded.reserved === 0n ? loaded : ((await this.hot.balance(userId)) ?? { balance: 0n, reserved: 0n });
    }
    return this.available(userId, b);
  }

  private available(userId: string, b: HotBalance) {
    const undrawn = this.leases?.undrawn(userId) ?? 0n;
    const reserved = b.reserved > undrawn ? b.reserved - undrawn : 0n;
    return { balance: b.balance, reserved, available: b.balance - reserved };
  }
}

function keySpendError(limit: bigint, period: SpendPeriod, spent: bigint, amount: bigint, now: Date): GatewayError {
  const end = periodEnd(period, now);
  const scope = period === 'total' ? 'in total' : `per ${period} (UTC)`;
  const message = `This key's spend limit of $${usdText(limit)} ${scope} is reached: $${usdText(spent)} spent or held, and this request may cost up to $${usdText(amount)}.`;
  // A lifetime cap never frees up by waiting: say so to the SDKs, which retry 429s by default.
  return end
    ? new GatewayError('rate_limit', message, {
        code: 'key_spend_limit',
        retryAfter: Math.max(1, Math.ceil((end.getTime() - now.getTime()) / 1000)),
      })
    : new GatewayError('rate_limit', message, { code: 'key_spend_limit', noRetry: true });
}
