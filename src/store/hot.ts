// The hot store: balances, reservations and the usage outbox, cached key lookups, rate-limit
// counters and pub/sub. Redis in production; an in-process twin when REDIS_URL is absent. Both
// pass the same contract suite (test/foundation/hot-contract.test.ts).
//
// Money moves through it like this (docs/architecture.md, "Reservations and settlement"):
// - a user's hot account holds `bal` = credits − every charge the hot store knows of; it is
//   loaded ("primed") from a consistent Postgres snapshot (balance, charged total) the first
//   time the user is seen, and carries a generation id that changes with each load;
// - settle charges `bal` and appends the usage record to the outbox in the same atomic step;
// - the outbox writer commits records to Postgres (idempotent on the settle id) and only then
//   acknowledges them. The acknowledgement corrects `bal` for the two cases the settle could not
//   know about: a record settled while no account was loaded (or under an older generation),
//   and a record that turned out to be a duplicate of one already committed.

/** A lease grows by at most this fraction (1/n) of what is available, so that others can lease too. */
export const LEASE_SHARE = 8;

/** How long a settled reservation id is remembered, so that a repeated settle charges nothing. */
export const SETTLED_MEMORY_MS = 60_000;

/**
 * How long a user's credits and cap changes are remembered for the account's loads: far longer
 * than a snapshot lives between its read and the load that takes it (a round trip, or an offered
 * one's second).
 */
export const LOAD_RACE_MEMORY_MS = 3_600_000;

export interface ReserveRequest {
  userId: string;
  reservationId: string;
  amount: bigint;
  ttlMs: number;
  /** The key the request came with; its limits and its held amount are tracked per key. */
  keyId: string;
  /** Requests per minute allowed for the key (fixed one-minute windows); 0 = no limit. */
  rpmLimit: number;
  /** The key's spend cap for the current period, with the account field that counts it. */
  spend?: { limit: bigint; field: string };
  /** Refuse new work once this many usage records wait in the outbox (0 = no bound). */
  outboxMax: number;
}

export type ReserveResult =
  | { status: 'ok'; available: bigint }
  | { status: 'insufficient'; available: bigint }
  /** The account is not loaded yet: prime it from Postgres and retry. */
  | { status: 'unknown' }
  | { status: 'rate_limited'; retryAfterMs: number }
  | { status: 'key_limit'; spent: bigint }
  /** The outbox is full (Postgres has been unreachable for a while). */
  | { status: 'backlog' };

/** One usage record as it travels through the outbox; the writer turns it into a row. */
export interface OutboxRecord {
  /** The reservation id: unique per request, the idempotency key of the charge. */
  settleId: string;
  userId: string;
  keyId: string | null;
  requestId: string;
  model: string;
  /** The inference surface's name (its dialect's `surface.name`: 'chat', 'messages'). */
  surface: string;
  stream: boolean;
  status: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  /** The full cost: a charge is never capped or written off. */
  costNano: bigint;
  officialCostNano: bigint;
  latencyMs: number;
  ttftMs: number | null;
  /** The cost went past what was reserved. */
  overrun: boolean;
  createdAt: Date;
  /**
   * provider/model of the route that answered (the catalogue's Route.key). Optional, and null
   * when no route answered or the entry was written by a gateway that did not carry it.
   */
  route?: string | null;
}

export interface SettleRequest {
  userId: string;
  reservationId: string;
  cost: bigint;
  /**
   * The lease the reservation was drawn from (a process's hold, `lease`), instead of a hold of
   * its own: the cost comes out of the lease's hold.
   */
  leaseId?: string;
  keyId: string | null;
  /** Account field counting the key's spend this period (only for keys with a spend cap). */
  spendField?: string;
  /** The previous period's field, dropped when the new period's first charge lands. */
  spendFieldBefore?: string;
  /** The usage record; absent for a plain release (nothing was used, nothing is recorded). */
  record?: OutboxRecord;
}

export interface SettleResult {
  /** The reservation was settled before (within SETTLED_MEMORY_MS): nothing charged now. */
  duplicate: boolean;
  /** Outbox entry id of the record, when one was written (by the first settle, for a repeat). */
  entryId?: string;
  /** Settled against a lease whose hold is gone (expired, returned, or Redis lost it). */
  leaseGone?: boolean;
  /** What the settle took out of the lease's hold: the cost, or all the hold had left. */
  leaseTaken?: bigint;
}

/**
 * A process's standing hold on a user's balance (a lease), from which its requests take their
 * worst case without a store call each. `open` starts one under a fresh id; `extend` renews an
 * existing one (refused as `gone` when its hold no longer exists: expired, or Redis lost it);
 * both add at least `need` (else refused) and up to `grow`, and set the expiry `ttlMs` from now.
 * `close` hands back `give` and removes the hold once nothing is left in it.
 */
export interface LeaseRequest {
  userId: string;
  leaseId: string;
  mode: 'open' | 'extend' | 'close';
  need: bigint;
  grow: bigint;
  give: bigint;
  ttlMs: number;
  /** Refuse growth once this many usage records wait in the outbox (0 = no bound). */
  outboxMax: number;
}

export type LeaseResult =
  /** `granted` added to the hold (0 for a close). */
  | { status: 'ok'; granted: bigint }
  | { status: 'insufficient'; available: bigint }
  | { status: 'unknown' }
  | { status: 'backlog' }
  | { status: 'gone' };

/** A Postgres snapshot (one transaction) of what a user's hot account starts from. */
export interface PrimeSnapshot {
  balance: bigint;
  /** Cumulative charges committed to Postgres (users.charged_nano) at the same instant. */
  charged: bigint;
  /** Spend of keys with a cap, in their current period: account field → nano-USD. */
  keySpend: Record<string, bigint>;
  /** How many credits the balance holds (users.credit_seq, read with it): see credit(). */
  creditSeq: bigint;
  /** How many spend-cap changes the caps' spend holds (users.limits_seq): see forgetBalance(). */
  limitsSeq: bigint;
}

export interface OutboxEntry {
  /** Its id in its stream (Redis: ids of different shards may be equal). */
  id: string;
  /** Redis: the stream (outbox shard) it is in, which its acknowledgement goes to. */
  stream?: string;
  record: OutboxRecord;
  /** Generation of the account that was charged at settle, '' if none was loaded. */
  generation: string;
  spendField: string;
}

/** How the writer's commit classified an entry, which decides the correction at ack. */
export type CommitKind =
  /** Inserted now. */
  | 'inserted'
  /** Already committed by this very entry (a redelivery after a crash before the ack). */
  | 'redelivered'
  /** The same charge was already committed from another entry. */
  | 'duplicate'
  /** Its user no longer exists: nothing to correct. */
  | 'dropped';

export interface AckItem {
  entry: OutboxEntry;
  kind: CommitKind;
  /** users.charged_nano right after this record's row was committed (inserted / redelivered). */
  chargedAfter: bigint;
}

export interface HotBalance {
  balance: bigint;
  reserved: bigint;
}

/** One loaded account, for reconciliation against Postgres. */
export interface HotAccountSnapshot {
  userId: string;
  balance: bigint;
  reserved: bigint;
  /** Sum of the live holds, which must equal `reserved`. */
  holds: bigint;
  /** Charges in the outbox that this account's balance already carries. */
  pendingAccounted: bigint;
  /** Their settle ids: one may be committed already and not yet acknowledged (reconcile.ts). */
  pendingAccountedIds: string[];
  /** Charges in the outbox that will reach the balance when acknowledged. */
  pendingUnaccounted: bigint;
}

// The hot store by concern. Each caller takes the narrowest of these it needs (the outbox writer
// an OutboxStore, the key cache a SharedCache and a Bus, …); the two stores (hot-redis.ts,
// hot-memory.ts) implement them all as HotStore.

/** The money: balances, holds, leases and charges, each step atomic. */
export interface AccountStore {
  /**
   * True when a settle is durable once it returns (Redis with AOF). False for the in-process
   * store, whose outbox lives in memory: callers wait for the writer's commit (`whenCommitted`).
   */
  readonly durableSettle: boolean;

  reserve(req: ReserveRequest): Promise<ReserveResult>;
  /** Grow, renew or hand back a lease (LeaseRequest); one atomic step, like reserve. */
  lease(req: LeaseRequest): Promise<LeaseResult>;
  /**
   * Atomically releases the hold, charges `cost` to a loaded account (below zero if need be)
   * and appends the record to the outbox. Idempotent per reservation id for SETTLED_MEMORY_MS.
   */
  settle(req: SettleRequest): Promise<SettleResult>;
  /** Resolves when the outbox entry has been committed to Postgres (in-process store only). */
  whenCommitted(entryId: string): Promise<void>;
  /**
   * Loads an account if none is loaded; a loaded one is left alone. Answers the balance it
   * loaded and what is held against it (holds that outlived an earlier load, expired ones
   * included), null when one was loaded already, or 'stale' (nothing loaded) when the snapshot
   * was read before a spend cap's change that forgetBalance marked: read it again.
   */
  primeBalance(userId: string, snapshot: PrimeSnapshot): Promise<HotBalance | null | 'stale'>;
  /**
   * A credit committed in Postgres as the user's `seq`-th (users.credit_seq). A loaded account
   * takes it unless its snapshot held it already; one not loaded yet takes it at its load if its
   * snapshot was read before the credit's commit. Credits are remembered for LOAD_RACE_MEMORY_MS.
   */
  credit(userId: string, amount: bigint, seq: bigint): Promise<void>;
  /** Balance and live holds (expired ones are released first), or null if not loaded. */
  balance(userId: string): Promise<HotBalance | null>;
  /**
   * Drops a loaded account so that the next request loads it again (safe at any time). With
   * `limitsSeq` (a spend cap changed, users.limits_seq), loads from a snapshot that counts fewer
   * changes are refused for LOAD_RACE_MEMORY_MS: a load racing the change cannot install old caps.
   */
  forgetBalance(userId: string, limitsSeq?: bigint): Promise<void>;
  /** count_tokens and other unbilled calls: counts against the key's rpm, needs a positive balance. */
  gate(
    userId: string,
    keyId: string,
    rpmLimit: number,
  ): Promise<'ok' | 'unknown' | 'insufficient' | { retryAfterMs: number }>;
}

/** The usage records on their way to Postgres, drained by src/billing/outbox-writer.ts. */
export interface OutboxStore {
  readonly durableSettle: boolean;
  /** Entries for `consumer`: its own unacknowledged ones first, then new ones (waiting up to blockMs). */
  readOutbox(consumer: string, count: number, blockMs: number): Promise<OutboxEntry[]>;
  /** Acknowledge committed entries and apply each one's balance correction, once per entry. */
  ackOutbox(items: AckItem[]): Promise<void>;
  /** Take over the unacknowledged entries of writers that stopped heartbeating. Returns how many. */
  claimAbandoned(consumer: string): Promise<number>;
  /** Says this writer is alive (entries of a writer without a heartbeat are claimed by others). */
  heartbeat(consumer: string, ttlMs: number): Promise<void>;
  /** Entries appended but not yet acknowledged. */
  outboxLength(): Promise<number>;
  /** Every loaded account with its outbox sums, read atomically. */
  snapshotAccounts(): Promise<HotAccountSnapshot[]>;
}

/** Values every process sees (the key cache), with a time to live. */
export interface SharedCache {
  getCached(key: string): Promise<string | null>;
  /** With onlyIfAbsent, an existing live value wins (SET NX), so a tombstone cannot be overwritten. */
  setCached(key: string, value: string, ttlMs: number, opts?: { onlyIfAbsent?: boolean }): Promise<void>;
  deleteCached(key: string): Promise<void>;
}

/** Fixed-window counters (login and signup limits, refusal tarpits). */
export interface Counters {
  /** Count one event in a fixed window; returns the count so far and the seconds left. */
  hit(bucket: string, windowS: number): Promise<{ count: number; ttlS: number }>;
  resetHits(bucket: string): Promise<void>;
  /** Takes back one event counted by hit(), if its window is still open; never below zero. */
  releaseHit(bucket: string): Promise<void>;
}

/** Messages to every gateway process (a revoked key, a saved catalogue, a credit). */
export interface Bus {
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, onMessage: (message: string) => void): Promise<void>;
}

export interface HotStore extends AccountStore, OutboxStore, SharedCache, Counters, Bus {
  readonly kind: 'redis' | 'memory';
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Outbox records travel as JSON: bigints as strings, the date as an ISO string. */
// Positional: the record is written once per request and read once, and the field names were
// most of its bytes. Version 1 leads so that the layout can change.
export function encodeRecord(r: OutboxRecord): string {
  return JSON.stringify([
    1,
    r.settleId,
    r.userId,
    r.keyId,
    r.requestId,
    r.model,
    r.surface,
    r.stream ? 1 : 0,
    r.status,
    r.promptTokens,
    r.completionTokens,
    r.cachedTokens,
    r.cacheWriteTokens,
    r.costNano.toString(),
    r.officialCostNano.toString(),
    r.latencyMs,
    r.ttftMs,
    r.overrun ? 1 : 0,
    r.createdAt.getTime(),
    // Appended last: an entry of an older gateway, one shorter, still decodes (no route).
    r.route ?? null,
  ]);
}

export function decodeRecord(text: string): OutboxRecord {
  const o = JSON.parse(text);
  if (!Array.isArray(o)) {
    // Written by a version before the positional layout, still in the stream.
    return {
      ...o,
      costNano: BigInt(o.costNano),
      officialCostNano: BigInt(o.officialCostNano),
      createdAt: new Date(o.createdAt),
    };
  }
  return {
    settleId: o[1],
    userId: o[2],
    keyId: o[3],
    requestId: o[4],
    model: o[5],
    surface: o[6],
    stream: o[7] === 1,
    status: o[8],
    promptTokens: o[9],
    completionTokens: o[10],
    cachedTokens: o[11],
    cacheWriteTokens: o[12],
    costNano: BigInt(o[13]),
    officialCostNano: BigInt(o[14]),
    latencyMs: o[15],
    ttftMs: o[16],
    overrun: o[17] === 1,
    createdAt: new Date(o[18]),
    // Left out rather than null when absent, so a decoded record equals the one encoded.
    ...(o[19] != null ? { route: o[19] as string } : {}),
  };
}
