// A process's standing holds on its users' balances (leases). A request's worst case comes out
// of its user's lease in this process, without a store call; the lease itself is a hold in the
// hot store, taken from what the balance has available (so every process's leases together
// never exceed it), topped up by one batched store call for many requests, and handed back
// once idle. A settle charges the actual cost and takes it out of the lease's hold in the same
// atomic step, so the balance minus every hold stays what it would have been with one hold per
// request.
//
// Why it is safe:
// - This process's count of a lease (`size`) follows its hold in the store: a settle takes the
//   cost out of the hold (all of it, or what the hold had left) and says how much, and that is
//   what is counted out here. A settle that got no answer is counted as taking the whole cost:
//   the count may then fall below the hold, never above it.
// - A draw is allowed only within `windowMs` of the store call that last set the hold's expiry,
//   which is set `ttlMs + windowMs` ahead: every request drawn from a lease is covered for the
//   reservation TTL, as its own hold would be, and a crashed process's leases expire like holds.
// - A lease whose hold is found gone (expired, or Redis lost its data) is dropped at once; the
//   requests already drawn from it are charged in full when they settle.

import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../clock.js';
import type { AccountStore, LeaseResult, SettleResult } from '../store/hot.js';

export interface LeaseOptions {
  /** How long a lease may be drawn from after the store call that last renewed it. */
  windowMs: number;
  /** A top-up brings the lease to this many of the current request's worst case. */
  requests: number;
  /** The reservation TTL: how long a drawn request stays covered. */
  ttlMs: number;
  outboxMax: number;
  /** Counts draws and store calls, for metrics: how many requests a store call serves. */
  observer?: LeaseObserver;
  /** Windows and idle hand-backs are timed by it (the wall clock unless a test moves its own). */
  clock?: Clock;
  /**
   * A user without a lease here makes their first request of a window on a hold of its own;
   * the second within the window opens the lease. A lease pays for itself from the second
   * request: for a user seen once (a one-off call, a burst of new keys) it costs the store an
   * open and, a window later, a close, where a hold of its own costs one reserve.
   */
  soloFirst?: boolean;
}

/** Users remembered for soloFirst, at most (then forgotten at once: they only lease a request later). */
const RECENT_MAX = 100_000;

export interface LeaseObserver {
  drawn(): void;
  called(mode: 'open' | 'extend' | 'close'): void;
}

export class Lease {
  readonly id = randomUUID();
  /** The hold in the store, as this process counts it (never more than the store's). */
  size = 0n;
  /** Worst cases drawn by requests not settled yet. */
  drawn = 0n;
  /** Draws are allowed until then (this process's clock). */
  until = 0;
  lastDraw = 0;
  dead = false;
  /** The store call in flight; draws that did not fit wait for it. */
  pending?: Promise<void>;
  /** Draws waiting for `pending`: the top-up is sized for them too. */
  waiting = 0;

  constructor(readonly userId: string) {}

  get free(): bigint {
    return this.size - this.drawn;
  }
}

/** Why no lease could be drawn from: the store's refusal. */
export type NoLease = Extract<LeaseResult, { status: 'insufficient' | 'unknown' | 'backlog' }>;
type RefillOutcome = NoLease | { status: 'ok' } | { status: 'retry' };

export class Leases {
  private readonly byUser = new Map<string, Lease>();
  /** soloFirst: users whose request went without a lease, until when their next one opens it. */
  private readonly recent = new Map<string, number>();
  private stopIdle?: () => void;
  private readonly clock: Clock;

  constructor(
    private readonly hot: AccountStore,
    private readonly opts: LeaseOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
  }

  /** Whether this request of the user draws from a lease (see soloFirst). */
  wants(userId: string): boolean {
    if (!this.opts.soloFirst || this.byUser.has(userId)) return true;
    const now = this.clock.now();
    if ((this.recent.get(userId) ?? 0) > now) return true;
    if (this.recent.size >= RECENT_MAX) this.recent.clear();
    this.recent.set(userId, now + this.opts.windowMs);
    return false;
  }

  /**
   * The user's lease with `amount` drawn from it, topped up first when it must be; or why not.
   * `prime` loads an account the store does not know yet. Throws when the store is unreachable.
   */
  async draw(userId: string, amount: bigint, prime: () => Promise<void>): Promise<Lease | NoLease> {
    for (;;) {
      const lease = this.tryDraw(userId, amount);
      if (lease) return lease;
      const pending = this.pendingFor(userId);
      if (pending) {
        await pending;
        continue;
      }
      let outcome = await this.refill(userId, amount);
      if (outcome.status === 'unknown') {
        await prime();
        outcome = await this.refill(userId, amount);
      }
      if (outcome.status !== 'ok' && outcome.status !== 'retry') return outcome;
    }
  }

  /** Takes `amount` from the user's lease when it has that much and may be drawn from now. */
  private tryDraw(userId: string, amount: bigint): Lease | undefined {
    const lease = this.byUser.get(userId);
    if (!lease || lease.pending) return undefined;
    const now = this.clock.now();
    if (now >= lease.until || lease.free < amount) return undefined;
    lease.drawn += amount;
    lease.lastDraw = now;
    this.opts.observer?.drawn();
    return lease;
  }

  /** The call in flight for this user's lease, if any, to wait for before drawing again. */
  private pendingFor(userId: string): Promise<void> | undefined {
    const lease = this.byUser.get(userId);
    if (lease?.pending) lease.waiting++;
    return lease?.pending;
  }

  /**
   * One store call that opens the user's lease, or renews it and tops it up so that `amount`
   * (and the requests waiting) fit. `retry` means the lease was found gone: open a new one.
   */
  private async refill(userId: string, amount: bigint): Promise<RefillOutcome> {
    // A lease found gone or closed has left the map: a new one is opened.
    const lease = this.byUser.get(userId);
    const open = lease === undefined;
    const target = lease ?? new Lease(userId);
    if (open) this.byUser.set(userId, target);
    const free = target.free;
    const need = amount > free ? amount - free : 0n;
    const want = amount * BigInt(this.opts.requests + target.waiting) - free;
    target.waiting = 0;
    const sent = this.clock.now();
    let result: LeaseResult;
    let done!: () => void;
    target.pending = new Promise<void>((resolve) => (done = resolve));
    this.opts.observer?.called(open ? 'open' : 'extend');
    try {
      result = await this.hot.lease({
        userId,
        leaseId: target.id,
        mode: open ? 'open' : 'extend',
        need,
        grow: want > need ? want : need,
        give: 0n,
        ttlMs: this.opts.ttlMs + this.opts.windowMs,
        outboxMax: this.opts.outboxMax,
      });
    } catch (err) {
      this.settleRefill(target, open);
      this.suspend();
      done();
      throw err;
    }
    if (result.status === 'ok') {
      target.size += result.granted;
      target.until = sent + this.opts.windowMs;
      target.lastDraw = sent;
    }
    this.settleRefill(target, open && result.status !== 'ok');
    if (result.status === 'gone') this.drop(target);
    done();
    return result.status === 'gone' ? { status: 'retry' } : result.status === 'ok' ? { status: 'ok' } : result;
  }

  private settleRefill(target: Lease, discard: boolean) {
    target.pending = undefined;
    if (discard && this.byUser.get(target.userId) === target) {
      target.dead = true;
      this.byUser.delete(target.userId);
    }
  }

  /**
   * A request drawn from `lease` is settled: its worst case is no longer drawn, and what the
   * settle took out of the hold (as the store answered; the whole `cost` when `result` is
   * absent: no answer, or a release that never asked) is no longer held. A hold the store found
   * gone drops the lease.
   */
  settled(lease: Lease, amount: bigint, cost: bigint, result?: SettleResult): void {
    lease.drawn -= amount;
    lease.size -= result?.leaseTaken ?? cost;
    if (result?.leaseGone) this.drop(lease);
  }

  private drop(lease: Lease) {
    lease.dead = true;
    if (this.byUser.get(lease.userId) === lease) this.byUser.delete(lease.userId);
  }

  /** Starts handing back leases left idle for a window. */
  start(): void {
    this.stopIdle ??= this.clock.every(this.opts.windowMs, () => this.closeIdle());
  }

  /** Hands back every lease nothing is drawn from and that was not drawn from for a window (all of them with `all`). */
  async closeIdle(all = false): Promise<void> {
    const now = this.clock.now();
    const closing: Promise<unknown>[] = [];
    for (const lease of this.byUser.values()) {
      if (lease.pending || lease.drawn !== 0n || (!all && now - lease.lastDraw < this.opts.windowMs)) continue;
      this.drop(lease);
      this.opts.observer?.called('close');
      // A failed close leaves the hold to expire.
      closing.push(
        this.hot
          .lease({
            userId: lease.userId,
            leaseId: lease.id,
            mode: 'close',
            need: 0n,
            grow: 0n,
            give: lease.size,
            ttlMs: 0,
            outboxMax: 0,
          })
          .catch(() => {}),
      );
    }
    await Promise.all(closing);
  }

  /**
   * The store could not be reached: no lease is drawn from again before a store call renews it,
   * so that requests are refused (503) as they would be without leases, instead of being
   * forwarded with no store to record their charge.
   */
  suspend(): void {
    for (const lease of this.byUser.values()) lease.until = 0;
  }

  /** What this process's lease for the user holds that no request has drawn. */
  undrawn(userId: string): bigint {
    const lease = this.byUser.get(userId);
    return lease && !lease.dead && lease.free > 0n ? lease.free : 0n;
  }

  /** Leases held by this process (for tests and metrics). */
  get size(): number {
    return this.byUser.size;
  }

  async stop(): Promise<void> {
    this.stopIdle?.();
    this.stopIdle = undefined;
    await this.closeIdle(true);
  }
}
