// After the answer: charge a reservation's actual cost and release the rest of its hold, the
// usage record going to the outbox in the same store step; or release a hold that was not used.
// A settle the hot store could not take is tried again until it lands, so that what was served
// is billed and a hold does not linger for its whole TTL.

import type { Logger } from 'pino';
import type { AccountStore, OutboxRecord, SettleResult } from '../store/hot.js';
import { previousSpendField, spendField } from './key-limits.js';
import type { Leases } from './leases.js';
import { unavailable, type Reservation } from './reservation.js';

const SETTLE_RETRY_PAUSE_MS = 100;

export interface SettlementOptions {
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
}

export class Settlement {
  /**
   * Settles (and releases) that failed because the hot store was unreachable: tried again until
   * they land, so a delivered answer is billed and a hold does not linger for its whole TTL.
   */
  private readonly retries = new Map<string, { res: Reservation; cost: bigint; record?: OutboxRecord }>();
  private retryTimer?: NodeJS.Timeout;

  constructor(
    private readonly hot: AccountStore,
    private readonly opts: SettlementOptions,
    /** The ledger's leases: a reservation drawn from one gives its draw back there. */
    private readonly leases?: Leases,
  ) {}

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
      this.leases?.suspend();
      this.opts.log?.warn({ err: (err as Error)?.message }, 'settle failed: the hot store is unreachable');
      throw unavailable();
    }
    this.giveBack(res, cost, result);
    if (result.duplicate) return 0n;
    if (!this.hot.durableSettle && result.entryId) await this.awaitCommit(result.entryId);
    return cost;
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

  /** At shutdown, after the last try: no more retries, and what still cannot land is logged in full. */
  stop(): void {
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
}
