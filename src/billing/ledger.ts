// Reserve before forwarding, settle after: the hot-store side of every request's money. The
// ledger holds a request's worst case (a hold of its own, or a draw from its process's lease) or
// refuses it; the settle is settlement.ts, an account's load and its balance balances.ts.

import type { Clock } from '../clock.js';
import { GatewayError } from '../errors.js';
import type { HotBalance, HotStore, OutboxRecord, PrimeSnapshot, ReserveResult } from '../store/hot.js';
import type { Sql } from '../store/sql.js';
import { Balances } from './balances.js';
import { periodEnd, spendField, type KeyLimits, type SpendPeriod } from './key-limits.js';
import { Lease, Leases, type LeaseObserver } from './leases.js';
import { usdText } from './money.js';
import { reservationId, unavailable, type Reservation } from './reservation.js';
import { Settlement, type SettlementOptions } from './settlement.js';

export interface Payer {
  userId: string;
  keyId: string;
  limits: KeyLimits;
}

export interface LedgerOptions extends SettlementOptions {
  ttlMs: number;
  /** Refuse new requests (503) once this many records wait for Postgres; 0 = no bound. */
  outboxMax: number;
  /**
   * Leases (src/billing/leases.ts): requests of keys without limits take their worst case from a
   * standing hold of this process, renewed at least every `windowMs`, topped up to `requests`
   * worst cases. Absent: every request reserves in the store.
   */
  leases?: { windowMs: number; requests: number; observer?: LeaseObserver; clock?: Clock; soloFirst?: boolean };
}

const backlog = () => new GatewayError('unavailable', 'The gateway cannot record usage right now; try again shortly.');
const insufficient = (amount: bigint, available: bigint) =>
  new GatewayError(
    'insufficient_balance',
    `Insufficient balance: this request may cost up to $${usdText(amount)} but $${usdText(available < 0n ? 0n : available)} is available. Add funds or lower max_tokens.`,
  );

export class Ledger {
  /** Users seen with money available in the last second: their requests skip the pre-check. */
  private readonly funded = new Map<string, number>();
  private readonly leases?: Leases;
  private readonly balances: Balances;
  private readonly settlement: Settlement;

  constructor(
    sql: Sql,
    private readonly hot: HotStore,
    private readonly opts: LedgerOptions,
  ) {
    if (opts.leases) {
      this.leases = new Leases(hot, { ...opts.leases, ttlMs: opts.ttlMs, outboxMax: opts.outboxMax });
      this.leases.start();
    }
    this.balances = new Balances(sql, hot, this.leases);
    this.settlement = new Settlement(hot, opts, this.leases);
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
  settle(res: Reservation, cost: bigint, record: OutboxRecord): Promise<bigint> {
    return this.settlement.settle(res, cost, record);
  }

  /**
   * Like settle, for an answer already delivered: if the store is down, the charge is kept and
   * tried again until it lands, so what was served is billed once the store is back. The
   * reservation counts as settled from here on either way: the retry owns it.
   */
  settleEventually(res: Reservation, cost: bigint, record: OutboxRecord): Promise<boolean> {
    return this.settlement.settleEventually(res, cost, record);
  }

  /** Release a hold that was not used: nothing charged, nothing recorded. */
  release(res: Reservation): Promise<void> {
    return this.settlement.release(res);
  }

  /** The hot store lost data (or could not be reached): no lease is drawn from before a store call renews it. */
  suspendLeases(): void {
    this.leases?.suspend();
  }

  /** Charges waiting for the store to come back. */
  get pendingSettles(): number {
    return this.settlement.pendingSettles;
  }

  retryPending(): Promise<void> {
    return this.settlement.retryPending();
  }

  /** Called at shutdown: one last try; what still cannot land is logged in full. */
  async stop(): Promise<void> {
    if (this.settlement.pendingSettles > 0) await this.settlement.retryPending();
    await this.leases?.stop();
    this.settlement.stop();
  }

  /** Loads the account from Postgres if it is not loaded: what it loaded, or null if it was. */
  prime(userId: string): Promise<HotBalance | null> {
    return this.balances.prime(userId);
  }

  /** An account snapshot read with a key's lookup, for that account's load (balances.ts). */
  offer(userId: string, snapshot: PrimeSnapshot): void {
    this.balances.offer(userId, snapshot);
  }

  /**
   * Balance, live reservations and what is available, loading the account if needed (what this
   * process's lease holds undrawn counts as available).
   */
  balance(userId: string): Promise<{ balance: bigint; reserved: bigint; available: bigint }> {
    return this.balances.balance(userId);
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
