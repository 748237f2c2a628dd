// The hot store on Redis, one server or a Redis Cluster: its connections, and the parts that do
// the work, each in a file of its own: the money (redis-accounts.ts), the usage outbox
// (redis-outbox.ts), the key cache and the counters (redis-cache.ts), pub/sub (redis-bus.ts),
// and surviving a Redis that lost data (redis-watch.ts). RedisHotStore is HotStore as their sum.

import { Cluster, type Redis, type RedisOptions } from 'ioredis';
import type {
  AckItem,
  HotAccountSnapshot,
  HotBalance,
  HotStore,
  LeaseRequest,
  LeaseResult,
  OutboxEntry,
  PrimeSnapshot,
  ReserveRequest,
  ReserveResult,
  SettleRequest,
  SettleResult,
} from './hot.js';
import { Batcher, Turn } from './batch.js';
import { ACCOUNT_COMMANDS, RedisAccounts, type AccountScripts } from './redis-accounts.js';
import { RedisBus } from './redis-bus.js';
import { COUNTER_COMMANDS, RedisCache, type CounterScripts } from './redis-cache.js';
import { connectRedis, isCluster, whenReady, type RedisClient, type RedisTarget } from './redis-connect.js';
import { RedisLayout } from './redis-layout.js';
import { OUTBOX_COMMANDS, RedisOutbox, type OutboxScripts } from './redis-outbox.js';
import { LossWatch, type WatchOptions } from './redis-watch.js';
import { adoptLegacy } from './redis-legacy.js';

export { compareEntryIds } from './redis-watch.js';

// Per user (keys named by redis-layout.ts, all in the slot of the user's outbox shard): `acct`
// (hash: bal, cbase, gen, cseq, and the spend fields of keys with a cap), `credits` (hash: the
// credits of the last LOAD_RACE_MEMORY_MS, seq → amount, for the account's loads), `limits` (the
// count of cap changes a load's snapshot must hold, for LOAD_RACE_MEMORY_MS), `res` (hash: live
// reservation id → "amount|keyId" for a key with a spend cap, else "amount"), `resx` (zset: id →
// expiry ms), `resv` (total held), `kheld` (hash: capped key → held), `settled:<n>` (hash: id
// settled in the n-th SETTLED_MEMORY_MS of the clock → its outbox entry's id). Per shard: `outbox` (stream, consumer
// group `writers`) and `epoch` (changes when Redis lost the shard's data). Each operation that
// reads and writes is one Lua script, so it is atomic and one round trip, and touches one slot;
// expired holds are swept by the next script that looks at the user, so a crashed process never
// strands money.

// The scripts, as Redis runs them, put together once per process: their pieces are in ./lua/
// (lua.ts), each part declares its own, and all are commands of the one connection.
const COMMANDS = { ...ACCOUNT_COMMANDS, ...OUTBOX_COMMANDS, ...COUNTER_COMMANDS };

type Scripted = RedisClient & AccountScripts & OutboxScripts & CounterScripts;

export interface RedisHotStoreOptions {
  /** Time allowed to connect, and for each command: an unreachable Redis fails fast (503). */
  timeoutMs?: number;
}

export class RedisHotStore implements HotStore {
  readonly kind = 'redis';
  readonly durableSettle = true;
  readonly clustered: boolean;
  private readonly redis: Scripted;
  /** Blocking outbox reads get a connection of their own, so they never hold up the rest. */
  private reader?: RedisClient;
  /** Why the connection is down, if it is: more telling than "max retries reached". */
  private lastError?: Error;
  private readonly layout: RedisLayout;
  private readonly accounts: RedisAccounts;
  private readonly outbox: RedisOutbox;
  private readonly cache: RedisCache;
  private readonly bus: RedisBus;
  /**
   * Settles this process made that the writers have not acknowledged yet, for the day Redis
   * loses its data (redis-watch.ts).
   */
  private readonly loss: LossWatch;
  private readonly timeoutMs: number;

  /**
   * `target`: a single server's URL, or a Redis Cluster's seed nodes (redis-connect.ts).
   */
  constructor(
    private readonly target: RedisTarget,
    prefix = 'ar:',
    opts: RedisHotStoreOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.clustered = isCluster(target);
    this.layout = new RedisLayout(prefix);
    this.redis = this.connect() as Scripted;
    this.redis.on('ready', () => (this.lastError = undefined));
    for (const [name, command] of Object.entries(COMMANDS)) this.redis.defineCommand(name, command);
    // A turn's reserve and settle calls leave in one write: a syscall less per turn.
    const turn = new Turn((flushAll) => {
      // A cluster writes to a connection per node: nothing single to cork.
      const socket = this.redis instanceof Cluster ? undefined : (this.redis as Redis).stream;
      socket?.cork();
      try {
        flushAll();
      } finally {
        socket?.uncork();
      }
    });
    // The cold path's commands (a key's shared cache, an account's balance and its load), sent
    // with the turn's other calls: a burst of new keys and accounts writes to Redis once a turn,
    // not once a command (each write a syscall, which is most of what a command costs here).
    const inTurn = new Batcher<() => Promise<unknown>, unknown>(
      (sends) => Promise.all(sends.map((send) => send())),
      turn,
    );
    this.outbox = new RedisOutbox(this.redis, this.layout, this.clustered, (blockMs) => this.readerFor(blockMs));
    this.loss = new LossWatch(
      this.redis,
      this.layout,
      async (req) => (await this.accounts.runSettle(req)).entryId,
      () => this.outbox.forgetGroups(),
    );
    this.accounts = new RedisAccounts(this.redis, this.layout, this.clustered, turn, inTurn, this.loss);
    this.cache = new RedisCache(this.redis, this.layout, this.clustered, turn, inTurn);
    this.bus = new RedisBus(this.redis, target, this.layout, this.timeoutMs, () => this.lastError);
  }

  private connect(extra: RedisOptions = {}): RedisClient {
    const r = connectRedis(this.target, {
      lazyConnect: false,
      // Reserves and settles are batched per turn already (batch.ts); an automatic pipeline per
      // turn on top of that cost more than the write it saved.
      enableAutoPipelining: false,
      connectTimeout: this.timeoutMs,
      commandTimeout: this.timeoutMs,
      // Queued commands fail once the connection has been down for a couple of retries, rather
      // than waiting for it indefinitely: callers answer 503 and try again later.
      maxRetriesPerRequest: 2,
      retryStrategy: (times: number) => Math.min(50 * times, 1000),
      // A command whose answer was lost with the connection may have run: sending it again
      // could apply it twice. It fails instead, and the caller decides (settles are retried
      // with their own idempotency, a request is answered 503).
      autoResendUnfulfilledCommands: false,
      ...extra,
    });
    r.on('error', (err: Error) => {
      // Reported through ping()/readyz; ioredis reconnects by itself.
      this.lastError = err;
    });
    return r;
  }

  private readerFor(blockMs: number): RedisClient {
    // A blocking read must outlast its block; a link that went silent still fails, later.
    this.reader ??= this.connect({ commandTimeout: Math.max(blockMs, 1000) + this.timeoutMs });
    return this.reader;
  }

  // ---- the money (redis-accounts.ts) ----

  reserve(req: ReserveRequest): Promise<ReserveResult> {
    return this.accounts.reserve(req);
  }

  lease(req: LeaseRequest): Promise<LeaseResult> {
    return this.accounts.lease(req);
  }

  settle(req: SettleRequest): Promise<SettleResult> {
    return this.accounts.settle(req);
  }

  whenCommitted(): Promise<void> {
    return this.accounts.whenCommitted();
  }

  primeBalance(userId: string, s: PrimeSnapshot): Promise<HotBalance | null | 'stale'> {
    return this.accounts.primeBalance(userId, s);
  }

  credit(userId: string, amount: bigint, seq: bigint): Promise<void> {
    return this.accounts.credit(userId, amount, seq);
  }

  balance(userId: string): Promise<HotBalance | null> {
    return this.accounts.balance(userId);
  }

  forgetBalance(userId: string, limitsSeq?: bigint): Promise<void> {
    return this.accounts.forgetBalance(userId, limitsSeq);
  }

  gate(userId: string, keyId: string, rpmLimit: number) {
    return this.accounts.gate(userId, keyId, rpmLimit);
  }

  // ---- outbox (redis-outbox.ts) ----

  readOutbox(consumer: string, count: number, blockMs: number): Promise<OutboxEntry[]> {
    return this.outbox.read(consumer, count, blockMs);
  }

  ackOutbox(items: AckItem[]): Promise<void> {
    return items.length === 0 ? Promise.resolve() : this.outbox.ack(items);
  }

  claimAbandoned(consumer: string): Promise<number> {
    return this.outbox.claimAbandoned(consumer);
  }

  heartbeat(consumer: string, ttlMs: number): Promise<void> {
    return this.outbox.heartbeat(consumer, ttlMs);
  }

  outboxLength(): Promise<number> {
    return this.outbox.length();
  }

  snapshotAccounts(): Promise<HotAccountSnapshot[]> {
    return this.outbox.snapshot();
  }

  /**
   * Drains what an older version left in its single outbox stream into Postgres, then drops
   * that version's keys (redis-legacy.ts). Before serving: an account loaded from Postgres
   * meanwhile would not carry the charges still on their way.
   */
  adoptLegacy(commit: (entries: OutboxEntry[]) => Promise<AckItem[]>): Promise<number> {
    return adoptLegacy(this.redis, this.layout, commit, (items) => this.outbox.ack(items));
  }

  // ---- surviving a Redis that lost data (redis-watch.ts) ----

  /** Called by the gateway, not by CLI commands. */
  startWatching(opts: WatchOptions): Promise<void> {
    return this.loss.start(opts);
  }

  /** One round of the watch (tests call it instead of waiting for the timer). */
  watch(): Promise<void> {
    return this.loss.watch();
  }

  get retainedCount(): number {
    return this.loss.retainedCount;
  }

  // ---- cache and counters (redis-cache.ts), pub/sub (redis-bus.ts) ----

  getCached(key: string): Promise<string | null> {
    return this.cache.getCached(key);
  }

  setCached(key: string, value: string, ttlMs: number, opts: { onlyIfAbsent?: boolean } = {}): Promise<void> {
    return this.cache.setCached(key, value, ttlMs, opts);
  }

  deleteCached(key: string): Promise<void> {
    return this.cache.deleteCached(key);
  }

  hit(bucket: string, windowS: number): Promise<{ count: number; ttlS: number }> {
    return this.cache.hit(bucket, windowS);
  }

  resetHits(bucket: string): Promise<void> {
    return this.cache.resetHits(bucket);
  }

  releaseHit(bucket: string): Promise<void> {
    return this.cache.releaseHit(bucket);
  }

  publish(channel: string, message: string): Promise<void> {
    return this.bus.publish(channel, message);
  }

  subscribe(channel: string, onMessage: (message: string) => void): Promise<void> {
    return this.bus.subscribe(channel, onMessage);
  }

  // ---- the connection ----

  async ping() {
    try {
      // A cluster's commands are refused until it is ready (no offline queue): wait for that.
      if (this.clustered) await whenReady(this.redis, this.timeoutMs, () => this.lastError);
      await this.redis.ping();
    } catch (err) {
      throw this.lastError ?? err;
    }
  }

  async close() {
    this.loss.stop();
    this.bus.close();
    this.reader?.disconnect();
    const r = this.redis;
    // Closing a connection still being set up (QUIT or disconnect alike) leaves ioredis holding
    // the socket for 2 s, and a CLI command's process with it: let the setup finish, briefly.
    if (r.status === 'connecting' || r.status === 'connect') {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          r.off('ready', done);
          r.off('end', done);
          resolve();
        };
        const timer = setTimeout(done, 1000);
        r.once('ready', done);
        r.once('end', done);
      });
    }
    // QUIT waits for every server's answer: a cluster whose nodes went away would never give it.
    if (r.status === 'ready')
      await Promise.race([
        r.quit().catch(() => {}),
        new Promise((resolve) => setTimeout(resolve, this.timeoutMs).unref()),
      ]);
    r.disconnect();
  }
}
