// The hot store: balances and reservations, cached key lookups, rate-limit counters and
// pub/sub. Redis in production; an in-process twin when REDIS_URL is absent. Both pass the
// same contract suite (test/foundation/hot-contract.test.ts).

/** How long a settled reservation id is remembered, so that a repeated settle charges nothing. */
export const SETTLED_MEMORY_MS = 60_000;

export interface ReserveResult {
  /** `unknown` means the balance is not loaded yet: prime it from Postgres and retry. */
  status: 'ok' | 'insufficient' | 'unknown';
  /** Available balance after the call (nano-USD). */
  available: bigint;
}

export interface SettleResult {
  /** What was actually taken from the balance: the cost, capped so it never goes negative. */
  charged: bigint;
  /** False when the balance was not loaded (e.g. Redis restarted): nothing was taken here. */
  known: boolean;
}

export interface HotStore {
  readonly kind: 'redis' | 'memory';
  /** Atomically hold `amount` unless balance − reservations cannot cover it. */
  reserve(userId: string, reservationId: string, amount: bigint, ttlMs: number): Promise<ReserveResult>;
  /**
   * Atomically release the reservation and charge `cost`. Idempotent per reservation id: the
   * settlement is remembered for SETTLED_MEMORY_MS, and a repeat within it charges nothing.
   * A settle after the hold expired (the request outlived it) still charges, once.
   */
  settle(userId: string, reservationId: string, cost: bigint): Promise<SettleResult>;
  /** Load the durable balance if none is held (SET NX semantics). */
  primeBalance(userId: string, balance: bigint): Promise<void>;
  /** Add a credit to a loaded balance; a balance not loaded will be primed from Postgres later. */
  credit(userId: string, amount: bigint): Promise<void>;
  /** Balance and live reservations (expired ones are released first), or null if not loaded. */
  balance(userId: string): Promise<{ balance: bigint; reserved: bigint } | null>;
  forgetBalance(userId: string): Promise<void>;

  getCached(key: string): Promise<string | null>;
  /** With onlyIfAbsent, an existing live value wins (SET NX), so a tombstone cannot be overwritten. */
  setCached(key: string, value: string, ttlMs: number, opts?: { onlyIfAbsent?: boolean }): Promise<void>;
  deleteCached(key: string): Promise<void>;

  /** Count one event in a fixed window; returns the count so far and the seconds left. */
  hit(bucket: string, windowS: number): Promise<{ count: number; ttlS: number }>;
  resetHits(bucket: string): Promise<void>;

  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, onMessage: (message: string) => void): Promise<void>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
