import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { systemClock, type Clock } from '../clock.js';
import { MemoryCache } from './memory-cache.js';
import {
  LOAD_RACE_MEMORY_MS,
  LEASE_SHARE,
  SETTLED_MEMORY_MS,
  type AckItem,
  type HotAccountSnapshot,
  type HotStore,
  type LeaseRequest,
  type LeaseResult,
  type OutboxEntry,
  type PrimeSnapshot,
  type ReserveRequest,
  type ReserveResult,
  type SettleRequest,
  type SettleResult,
} from './hot.js';

interface Hold {
  amount: bigint;
  keyId: string;
  expires: number;
}

interface Account {
  /** Absent until primed; holds can outlive it (forgetBalance), as on Redis. */
  acct?: { bal: bigint; cbase: bigint; gen: string; cseq: bigint; fields: Map<string, bigint> };
  reserved: bigint;
  /** Holds in flight (reservations and leases); a settled one leaves at once. */
  holds: Map<string, Hold>;
  /**
   * Settled ids by period of the clock (SETTLED_MEMORY_MS), each with its outbox entry ('' none),
   * kept for two periods, as settle.lua keeps `settled:<n>`: a repeat is looked for there only
   * when the hold is gone. (Kept among the holds as markers, a minute of one busy user's requests
   * was swept through on every call: 58 % of a ledger proxy's CPU at 3,000 requests a second.)
   */
  settled: Map<number, Map<string, string>>;
  keyHeld: Map<string, bigint>;
  /** Entries whose correction was applied (at most once each). */
  fixed: Set<string>;
  /** Charges committed and acknowledged while no account was loaded: entry → (charged after, cost, field). */
  late: Map<string, { after: bigint; cost: bigint; field: string }>;
  /** The credits of the last LOAD_RACE_MEMORY_MS, for the loads (see credit.lua): seq → amount. */
  credits: Map<bigint, { amount: bigint; until: number }>;
  /** The count of cap changes a load's snapshot must hold (see forget.lua), until when. */
  limits?: { seq: bigint; until: number };
}

interface Pending {
  entry: OutboxEntry;
  consumer?: string;
  committed: () => void;
  done: Promise<void>;
}

/**
 * The in-process twin of the Redis store, for the single-process embedded default. One event
 * loop makes every method atomic, as Lua makes them on Redis. Its outbox is only memory, so the
 * ledger waits for each entry's commit to Postgres before answering (write-ahead): a crash can
 * lose a hold, never an answered charge.
 */
export class MemoryHotStore implements HotStore {
  readonly kind = 'memory';
  readonly durableSettle = false;
  private readonly users = new Map<string, Account>();
  /** The key cache and the counters, which the requests-a-minute check counts in too. */
  private readonly shared: MemoryCache;
  private readonly bus = new EventEmitter();
  private readonly outbox = new Map<string, Pending>();
  private seq = 0;
  private wake?: () => void;

  /** `clock`: what the holds' expiries and the settled periods are timed by (Redis's TIME there). */
  constructor(private readonly clock: Pick<Clock, 'now'> = systemClock) {
    this.shared = new MemoryCache(clock);
  }

  private user(userId: string): Account {
    let u = this.users.get(userId);
    if (!u) {
      u = {
        reserved: 0n,
        holds: new Map(),
        settled: new Map(),
        keyHeld: new Map(),
        fixed: new Set(),
        late: new Map(),
        credits: new Map(),
      };
      this.users.set(userId, u);
    }
    return u;
  }

  private release(u: Account, hold: Hold) {
    u.reserved -= hold.amount;
    if (hold.keyId) u.keyHeld.set(hold.keyId, (u.keyHeld.get(hold.keyId) ?? 0n) - hold.amount);
  }

  private sweep(u: Account, now: number) {
    for (const [id, hold] of u.holds) {
      if (hold.expires <= now) {
        this.release(u, hold);
        u.holds.delete(id);
      }
    }
  }

  private rpmHit(bucket: string, limit: number, now: number): number | null {
    if (limit <= 0) return null;
    const { count } = this.shared.countHit(`${bucket}:${Math.floor(now / 60_000)}`, 61, now);
    return count > limit ? 60_000 - (now % 60_000) : null;
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const now = this.clock.now();
    const u = this.user(req.userId);
    this.sweep(u, now);
    // A hold made already is held once: a repeat neither holds its amount again nor counts
    // against the key (reserve.lua answers it first too).
    const held = u.holds.get(req.reservationId);
    if (held) return { status: 'ok', available: (u.acct?.bal ?? 0n) - u.reserved };
    if (req.outboxMax > 0 && this.outbox.size >= req.outboxMax) return { status: 'backlog' };
    if (!u.acct) return { status: 'unknown' };
    const wait = this.rpmHit(`rpm:${req.userId}:${req.keyId}`, req.rpmLimit, now);
    if (wait !== null) return { status: 'rate_limited', retryAfterMs: wait };
    if (req.spend) {
      const used = (u.acct.fields.get(req.spend.field) ?? 0n) + (u.keyHeld.get(req.keyId) ?? 0n);
      if (used + req.amount > req.spend.limit) return { status: 'key_limit', spent: used };
    }
    const available = u.acct.bal - u.reserved;
    if (req.amount > available) return { status: 'insufficient', available };
    // As in Redis, only a key with a spend cap has its holds counted.
    const keyId = req.spend ? req.keyId : '';
    u.holds.set(req.reservationId, { amount: req.amount, keyId, expires: now + req.ttlMs });
    u.reserved += req.amount;
    if (keyId) u.keyHeld.set(keyId, (u.keyHeld.get(keyId) ?? 0n) + req.amount);
    return { status: 'ok', available: available - req.amount };
  }

  async lease(req: LeaseRequest): Promise<LeaseResult> {
    const now = this.clock.now();
    const u = this.user(req.userId);
    this.sweep(u, now);
    const held = u.holds.get(req.leaseId);
    if (req.mode === 'close') {
      if (!held) return { status: 'ok', granted: 0n };
      const back = req.give < held.amount ? req.give : held.amount;
      held.amount -= back;
      u.reserved -= back;
      if (held.amount === 0n) u.holds.delete(req.leaseId);
      return { status: 'ok', granted: 0n };
    }
    if (req.mode === 'extend' && !held) return { status: 'gone' };
    if (req.outboxMax > 0 && this.outbox.size >= req.outboxMax) return { status: 'backlog' };
    if (!u.acct) return { status: 'unknown' };
    const available = u.acct.bal - u.reserved;
    if (req.need > available) return { status: 'insufficient', available };
    const share = available / BigInt(LEASE_SHARE);
    const granted = max(req.need, req.grow < share ? req.grow : share);
    u.reserved += granted;
    if (held) {
      held.amount += granted;
      held.expires = now + req.ttlMs;
    } else {
      u.holds.set(req.leaseId, { amount: granted, keyId: '', expires: now + req.ttlMs });
    }
    return { status: 'ok', granted };
  }

  async settle(req: SettleRequest): Promise<SettleResult> {
    if (!req.record && req.cost !== 0n) throw new Error('a charge needs its usage record');
    const now = this.clock.now();
    const u = this.user(req.userId);
    this.sweep(u, now);
    const period = Math.floor(now / SETTLED_MEMORY_MS);
    // A period's ids are let go two periods after it began, as settle.lua's hashes expire.
    for (const n of u.settled.keys()) if (n < period - 1) u.settled.delete(n);
    // A reservation drawn from a lease has no hold of its own: only the settled ids tell a repeat.
    const hold = req.leaseId ? undefined : u.holds.get(req.reservationId);
    if (hold) {
      this.release(u, hold);
      u.holds.delete(req.reservationId);
    } else {
      for (const ids of u.settled.values()) {
        const first = ids.get(req.reservationId);
        if (first !== undefined) return first ? { duplicate: true, entryId: first } : { duplicate: true };
      }
    }
    const result: SettleResult = { duplicate: false };
    if (req.leaseId) {
      const lease = u.holds.get(req.leaseId);
      if (lease) {
        const taken = req.cost < lease.amount ? req.cost : lease.amount;
        lease.amount -= taken;
        u.reserved -= taken;
        result.leaseTaken = taken;
      } else {
        result.leaseGone = true;
      }
    }
    let generation = '';
    if (u.acct) {
      generation = u.acct.gen;
      u.acct.bal -= req.cost;
      if (req.spendField) {
        if (req.spendFieldBefore && !u.acct.fields.has(req.spendField)) u.acct.fields.delete(req.spendFieldBefore);
        u.acct.fields.set(req.spendField, (u.acct.fields.get(req.spendField) ?? 0n) + req.cost);
      }
    }
    const id = req.record ? `${now}-${this.seq++}` : undefined;
    let settled = u.settled.get(period);
    if (!settled) u.settled.set(period, (settled = new Map()));
    settled.set(req.reservationId, id ?? '');
    if (!req.record || !id) return result;
    let committed!: () => void;
    const done = new Promise<void>((resolve) => (committed = resolve));
    this.outbox.set(id, {
      entry: { id, record: req.record, generation, spendField: req.spendField ?? '' },
      committed,
      done,
    });
    this.wake?.();
    result.entryId = id;
    return result;
  }

  whenCommitted(entryId: string): Promise<void> {
    return this.outbox.get(entryId)?.done ?? Promise.resolve();
  }

  async primeBalance(userId: string, s: PrimeSnapshot) {
    const u = this.user(userId);
    if (u.acct) return null;
    if (u.limits && u.limits.until >= this.clock.now() && u.limits.seq > s.limitsSeq) return 'stale' as const;
    const acct = {
      bal: s.balance,
      cbase: s.charged,
      gen: randomUUID(),
      cseq: s.creditSeq,
      fields: new Map(Object.entries(s.keySpend)),
    };
    u.acct = acct;
    // Committed after the snapshot, acknowledged before this load: not in the snapshot.
    for (const [id, l] of u.late) {
      if (l.after > s.charged && !u.fixed.has(id)) {
        u.fixed.add(id);
        acct.bal -= l.cost;
        if (l.field) acct.fields.set(l.field, (acct.fields.get(l.field) ?? 0n) + l.cost);
      }
    }
    u.late.clear();
    // Credits committed after the snapshot was read, whenever they reached this store.
    const now = this.clock.now();
    for (const [seq, c] of u.credits) {
      if (c.until < now) u.credits.delete(seq);
      else if (seq > s.creditSeq) acct.bal += c.amount;
    }
    return { balance: acct.bal, reserved: u.reserved };
  }

  async credit(userId: string, amount: bigint, seq: bigint) {
    const u = this.user(userId);
    const now = this.clock.now();
    for (const [old, c] of u.credits) if (c.until < now) u.credits.delete(old);
    u.credits.set(seq, { amount, until: now + LOAD_RACE_MEMORY_MS });
    if (u.acct && seq > u.acct.cseq) u.acct.bal += amount;
  }

  async balance(userId: string) {
    const u = this.users.get(userId);
    if (!u?.acct) return null;
    this.sweep(u, this.clock.now());
    return { balance: u.acct.bal, reserved: u.reserved };
  }

  async forgetBalance(userId: string, limitsSeq?: bigint) {
    const u = limitsSeq === undefined ? this.users.get(userId) : this.user(userId);
    if (!u) return;
    u.acct = undefined;
    if (limitsSeq === undefined) return;
    const now = this.clock.now();
    const mark = u.limits && u.limits.until >= now ? u.limits.seq : 0n;
    if (limitsSeq > mark) u.limits = { seq: limitsSeq, until: now + LOAD_RACE_MEMORY_MS };
  }

  async gate(userId: string, keyId: string, rpmLimit: number) {
    const now = this.clock.now();
    const u = this.user(userId);
    this.sweep(u, now);
    if (!u.acct) return 'unknown' as const;
    const wait = this.rpmHit(`rpm:${userId}:${keyId}`, rpmLimit, now);
    if (wait !== null) return { retryAfterMs: wait };
    return u.acct.bal - u.reserved > 0n ? ('ok' as const) : ('insufficient' as const);
  }

  // ---- outbox ----

  async readOutbox(consumer: string, count: number, blockMs: number): Promise<OutboxEntry[]> {
    const take = (mine: boolean) => {
      const out: OutboxEntry[] = [];
      for (const p of this.outbox.values()) {
        if (out.length >= count) break;
        if (mine ? p.consumer === consumer : p.consumer === undefined) {
          p.consumer = consumer;
          out.push(p.entry);
        }
      }
      return out;
    };
    const own = take(true);
    if (own.length > 0) return own;
    let fresh = take(false);
    if (fresh.length === 0 && blockMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, blockMs);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wake = done;
      });
      this.wake = undefined;
      fresh = take(false);
    }
    return fresh;
  }

  async ackOutbox(items: AckItem[]): Promise<void> {
    for (const it of items) {
      const p = this.outbox.get(it.entry.id);
      this.outbox.delete(it.entry.id);
      const u = this.user(it.entry.record.userId);
      const c = it.entry.record.costNano;
      const kf = it.entry.spendField;
      if (it.kind !== 'dropped') {
        if (u.acct) {
          let delta: bigint | undefined;
          if (it.kind === 'duplicate') {
            if (it.entry.generation === u.acct.gen) delta = c;
          } else if (it.entry.generation !== u.acct.gen && u.acct.cbase < it.chargedAfter) delta = -c;
          if (delta !== undefined && !u.fixed.has(it.entry.id)) {
            u.fixed.add(it.entry.id);
            u.acct.bal += delta;
            if (kf) u.acct.fields.set(kf, (u.acct.fields.get(kf) ?? 0n) - delta);
          }
        } else if (it.kind !== 'duplicate') {
          u.late.set(it.entry.id, { after: it.chargedAfter, cost: c, field: kf });
        }
      }
      p?.committed();
    }
  }

  async claimAbandoned(): Promise<number> {
    return 0; // one process: nobody else to claim from
  }

  async heartbeat(): Promise<void> {}

  async outboxLength(): Promise<number> {
    return this.outbox.size;
  }

  async snapshotAccounts(): Promise<HotAccountSnapshot[]> {
    const out: HotAccountSnapshot[] = [];
    const now = this.clock.now();
    for (const [userId, u] of this.users) {
      if (!u.acct) continue;
      this.sweep(u, now);
      let holds = 0n;
      for (const h of u.holds.values()) holds += h.amount;
      let accounted = 0n;
      let unaccounted = 0n;
      const accountedIds: string[] = [];
      for (const p of this.outbox.values()) {
        if (p.entry.record.userId !== userId) continue;
        if (p.entry.generation !== '' && p.entry.generation === u.acct.gen) {
          accounted += p.entry.record.costNano;
          accountedIds.push(p.entry.record.settleId);
        } else unaccounted += p.entry.record.costNano;
      }
      out.push({
        userId,
        balance: u.acct.bal,
        reserved: u.reserved,
        holds,
        pendingAccounted: accounted,
        pendingAccountedIds: accountedIds,
        pendingUnaccounted: unaccounted,
      });
    }
    return out;
  }

  // ---- cache, counters (memory-cache.ts), pub/sub ----

  getCached(key: string) {
    return this.shared.getCached(key);
  }
  setCached(key: string, value: string, ttlMs: number, opts: { onlyIfAbsent?: boolean } = {}) {
    return this.shared.setCached(key, value, ttlMs, opts);
  }
  deleteCached(key: string) {
    return this.shared.deleteCached(key);
  }
  hit(bucket: string, windowS: number) {
    return this.shared.hit(bucket, windowS);
  }
  resetHits(bucket: string) {
    return this.shared.resetHits(bucket);
  }
  releaseHit(bucket: string) {
    return this.shared.releaseHit(bucket);
  }

  async publish(channel: string, message: string) {
    this.bus.emit(channel, message);
  }
  async subscribe(channel: string, onMessage: (message: string) => void) {
    this.bus.on(channel, onMessage);
  }

  async ping() {}
  async close() {
    this.wake?.();
    this.bus.removeAllListeners();
  }
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);
