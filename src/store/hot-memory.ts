import { EventEmitter } from 'node:events';
import { SETTLED_MEMORY_MS, type HotStore, type ReserveResult, type SettleResult } from './hot.js';

interface Account {
  balance: bigint;
  reserved: bigint;
  /** reservation id → amount and expiry (ms); a settled id is kept a while, holding nothing. */
  holds: Map<string, { amount: bigint; expires: number; settled?: boolean }>;
}

/**
 * The in-process twin of the Redis store, for the single-process embedded default. One
 * event loop makes every method atomic, as Lua makes them on Redis.
 */
export class MemoryHotStore implements HotStore {
  readonly kind = 'memory';
  private readonly accounts = new Map<string, Account>();
  private readonly cache = new Map<string, { value: string; expires: number }>();
  private readonly hits = new Map<string, { count: number; expires: number }>();
  private readonly bus = new EventEmitter();

  private sweep(acct: Account, now = Date.now()) {
    for (const [id, hold] of acct.holds) {
      if (hold.expires <= now) {
        if (!hold.settled) acct.reserved -= hold.amount;
        acct.holds.delete(id);
      }
    }
  }

  async reserve(userId: string, id: string, amount: bigint, ttlMs: number): Promise<ReserveResult> {
    const acct = this.accounts.get(userId);
    if (!acct) return { status: 'unknown', available: 0n };
    const now = Date.now();
    this.sweep(acct, now);
    const available = acct.balance - acct.reserved;
    if (amount > available) return { status: 'insufficient', available };
    acct.holds.set(id, { amount, expires: now + ttlMs });
    acct.reserved += amount;
    return { status: 'ok', available: available - amount };
  }

  async settle(userId: string, id: string, cost: bigint): Promise<SettleResult> {
    const acct = this.accounts.get(userId);
    if (!acct) return { known: false, charged: 0n };
    const now = Date.now();
    this.sweep(acct, now);
    const hold = acct.holds.get(id);
    if (hold?.settled) return { known: true, charged: 0n };
    if (hold) acct.reserved -= hold.amount;
    let charged = cost > acct.balance ? acct.balance : cost;
    if (charged < 0n) charged = 0n;
    acct.balance -= charged;
    // Remembered so that a repeat charges nothing (see SETTLED_MEMORY_MS).
    acct.holds.set(id, { amount: 0n, expires: now + SETTLED_MEMORY_MS, settled: true });
    return { known: true, charged };
  }

  async primeBalance(userId: string, balance: bigint) {
    if (!this.accounts.has(userId)) this.accounts.set(userId, { balance, reserved: 0n, holds: new Map() });
  }

  async credit(userId: string, amount: bigint) {
    const acct = this.accounts.get(userId);
    if (acct) acct.balance += amount;
  }

  async balance(userId: string) {
    const acct = this.accounts.get(userId);
    if (!acct) return null;
    this.sweep(acct);
    return { balance: acct.balance, reserved: acct.reserved };
  }

  async forgetBalance(userId: string) {
    this.accounts.delete(userId);
  }

  async getCached(key: string) {
    const entry = this.cache.get(key);
    if (!entry) return null;
    if (entry.expires <= Date.now()) {
      this.cache.delete(key);
      return null;
    }
    return entry.value;
  }
  async setCached(key: string, value: string, ttlMs: number, opts: { onlyIfAbsent?: boolean } = {}) {
    if (opts.onlyIfAbsent && (await this.getCached(key)) !== null) return;
    this.cache.set(key, { value, expires: Date.now() + ttlMs });
  }

  async deleteCached(key: string) {
    this.cache.delete(key);
  }

  async hit(bucket: string, windowS: number) {
    const now = Date.now();
    let entry = this.hits.get(bucket);
    if (!entry || entry.expires <= now) {
      entry = { count: 0, expires: now + windowS * 1000 };
      this.hits.set(bucket, entry);
    }
    entry.count += 1;
    return { count: entry.count, ttlS: Math.max(1, Math.ceil((entry.expires - now) / 1000)) };
  }
  async resetHits(bucket: string) {
    this.hits.delete(bucket);
  }

  async publish(channel: string, message: string) {
    this.bus.emit(channel, message);
  }
  async subscribe(channel: string, onMessage: (message: string) => void) {
    this.bus.on(channel, onMessage);
  }

  async ping() {}
  async close() {
    this.bus.removeAllListeners();
  }
}
