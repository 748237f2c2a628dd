// What the gateway's hot store does for one request, and nothing else of the gateway: a hold
// before the request is forwarded (drawn from a lease, as the gateway does for keys without
// limits, or reserved on its own with `leases: false`), settled with its usage record before the answer's
// last byte goes out, and the outbox read and acknowledged as the usage writer does (without
// the Postgres commit in between). The bare proxy runs it with `--ledger` as the bench's
// "ledger" baseline: the floor that the money invariants' store round trips leave a proxy on
// the gateway's stack, below which none of the gateway's other work can take it.

import { randomUUID } from 'node:crypto';
import { Lease, Leases } from '../../src/billing/leases.js';
import { RoundPacer } from '../../src/billing/outbox-writer.js';
import type { HotStore, OutboxRecord } from '../../src/store/hot.js';
import { MemoryHotStore } from '../../src/store/hot-memory.js';
import { RedisHotStore } from '../../src/store/hot-redis.js';

export const LEDGER_USER = '00000000-0000-4000-8000-00000000be1c';
const KEY = '00000000-0000-4000-8000-00000000be1d';
const HOLD = 5000n;
export const LEDGER_COST = 1234n;
// The usage writer's defaults (USAGE_BATCH_MAX, USAGE_FLUSH_MS, USAGE_FLUSH_MAX_MS) and its
// pacing: the same batches it would read.
const BATCH = 1000;
const PAUSE_MS = 50;
const PAUSE_MAX_MS = 250;
// The gateway's defaults (LEASE_WINDOW_MS, LEASE_REQUESTS, RESERVATION_TTL_MS, OUTBOX_MAX).
const LEASES = { windowMs: 2000, requests: 32, ttlMs: 30 * 60_000, outboxMax: 100_000 };

/** A hold made for one request: its id, and the lease it was drawn from if any. */
export interface BenchHold {
  id: string;
  lease?: Lease;
}

export class BenchLedger {
  private readonly consumer = `bench-${process.pid}`;
  private closed = false;

  private readonly leases?: Leases;

  /** Open for the test that checks the baseline really does the store's work. */
  private constructor(
    readonly store: HotStore,
    leases: boolean,
  ) {
    if (leases) {
      this.leases = new Leases(store, LEASES);
      this.leases.start();
    }
  }

  /**
   * `spec`: a Redis URL, or `memory` for the in-process store the gateway uses without one.
   * `drain`: this process reads the outbox, as the gateway's one writer does (every process
   * does with `memory`, each having an outbox of its own). `leases`: holds drawn from a lease.
   */
  static async open(spec: string, prefix: string, drain: boolean, leases = true): Promise<BenchLedger> {
    const store = spec === 'memory' ? new MemoryHotStore() : new RedisHotStore(spec, prefix);
    await store.primeBalance(LEDGER_USER, {
      balance: 10n ** 18n,
      charged: 0n,
      keySpend: {},
      creditSeq: 0n,
      limitsSeq: 0n,
    });
    // As each gateway process does: the watch lets go of the settles the writer acknowledged,
    // which this process otherwise keeps for as long as it runs. No charge is in Postgres here.
    if (store instanceof RedisHotStore) await store.startWatching({ committed: async () => new Set() });
    const ledger = new BenchLedger(store, leases);
    if (drain || spec === 'memory') void ledger.drain();
    return ledger;
  }

  /** The hold; throws when the store refuses it (the proxy then answers 502). */
  async reserve(): Promise<BenchHold> {
    const id = randomUUID();
    if (this.leases) {
      const lease = await this.leases.draw(LEDGER_USER, HOLD, async () => {});
      if (!(lease instanceof Lease)) throw new Error(`lease: ${lease.status}`);
      return { id, lease };
    }
    const r = await this.store.reserve({
      userId: LEDGER_USER,
      reservationId: id,
      amount: HOLD,
      ttlMs: 60_000,
      keyId: KEY,
      rpmLimit: 0,
      outboxMax: 1_000_000,
    });
    if (r.status !== 'ok') throw new Error(`reserve: ${r.status}`);
    return { id };
  }

  /** The charge and its usage record; `used: false` releases the hold instead (in process, for a lease's). */
  async settle(hold: BenchHold, used: boolean, startedAt: number): Promise<void> {
    const { id, lease } = hold;
    const cost = used ? LEDGER_COST : 0n;
    if (lease && !used) return this.leases!.settled(lease, HOLD, 0n);
    try {
      const r = await this.store.settle({
        userId: LEDGER_USER,
        reservationId: id,
        cost,
        keyId: KEY,
        leaseId: lease?.id,
        record: used ? record(id, startedAt) : undefined,
      });
      if (lease) this.leases!.settled(lease, HOLD, cost, r);
    } catch (err) {
      if (lease) this.leases!.settled(lease, HOLD, cost);
      throw err;
    }
  }

  /**
   * The usage writer's rounds, minus Postgres: each batch read is acknowledged as inserted, and
   * a batch that was not full is followed by the writer's pause.
   */
  private async drain(): Promise<void> {
    const pacer = new RoundPacer(PAUSE_MS, PAUSE_MAX_MS);
    while (!this.closed) {
      const entries = await this.store.readOutbox(this.consumer, BATCH, 1000).catch(() => []);
      if (entries.length > 0)
        await this.store
          .ackOutbox(entries.map((entry) => ({ entry, kind: 'inserted' as const, chargedAfter: 0n })))
          .catch(() => {});
      if (entries.length < BATCH) await new Promise((resolve) => setTimeout(resolve, pacer.after(entries.length)));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.leases?.stop();
    await this.store.close();
  }
}

/** A record the size of the gateway's for the same request. */
function record(settleId: string, startedAt: number): OutboxRecord {
  return {
    settleId,
    userId: LEDGER_USER,
    keyId: KEY,
    requestId: `req_${settleId.replaceAll('-', '').slice(0, 24)}`,
    model: 'bench-static',
    surface: 'chat',
    stream: false,
    status: 200,
    promptTokens: 14,
    completionTokens: 24,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    costNano: LEDGER_COST,
    officialCostNano: 1542n,
    latencyMs: Math.round(performance.now() - startedAt),
    ttftMs: null,
    overrun: false,
    createdAt: new Date(),
  };
}
