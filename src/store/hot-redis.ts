import { randomUUID } from 'node:crypto';
import { Cluster, type Redis, type RedisOptions } from 'ioredis';
import {
  encodeRecord,
  LEASE_SHARE,
  SETTLED_MEMORY_MS,
  type AckItem,
  type HotAccountSnapshot,
  type HotBalance,
  type HotStore,
  type OutboxEntry,
  type PrimeSnapshot,
  type LeaseRequest,
  type LeaseResult,
  type ReserveRequest,
  type ReserveResult,
  type SettleRequest,
  type SettleResult,
} from './hot.js';
import { Batcher, batchedScript, OFFSETS, Turn } from './batch.js';
import { luaScript } from './lua.js';
import { connectRedis, isCluster, whenReady, type RedisClient, type RedisTarget } from './redis-connect.js';
import { RedisLayout, shardOf, slotOf } from './redis-layout.js';
import { GROUP, RedisOutbox } from './redis-outbox.js';
import { LossWatch, type WatchOptions } from './redis-watch.js';
import { adoptLegacy } from './redis-legacy.js';

export { compareEntryIds } from './redis-watch.js';

// Per user (keys named by redis-layout.ts, all in the slot of the user's outbox shard): `acct`
// (hash: bal, cbase, gen, and the spend fields of keys with a cap), `res` (hash: live
// reservation id → "amount|keyId" for a key with a spend cap, else "amount"), `resx` (zset: id →
// expiry ms), `resv` (total held), `kheld` (hash: capped key → held), `done:<n>` (set: ids
// settled in the n-th SETTLED_MEMORY_MS of the clock). Per shard: `outbox` (stream, consumer
// group `writers`) and `epoch` (changes when Redis lost the shard's data). Each operation that
// reads and writes is one Lua script, so it is atomic and one round trip, and touches one slot;
// expired holds are swept by the next script that looks at the user, so a crashed process never
// strands money.

// The scripts, as Redis runs them, put together once per process: their pieces are in ./lua/
// (lua.ts). A batched one's shared part (batch.ts) runs once per call, its body once per item.
// A command without numberOfKeys is given its key count with each call.
const HELPERS = ['neg', 'sweep'];
const COMMANDS: Record<string, { lua: string; numberOfKeys?: number }> = {
  arReserve: {
    lua: batchedScript(OFFSETS + luaScript([...HELPERS, 'rpm', 'outbox-len']), luaScript(['reserve']), {
      head: 0,
      keys: 2,
      args: 8,
      answers: 2,
    }),
  },
  arSettle: {
    lua: batchedScript(OFFSETS + luaScript([...HELPERS, 'settle-memo']), luaScript(['settle']), {
      head: 0,
      keys: 2,
      args: 8,
      answers: 4,
    }),
  },
  arLease: {
    lua: batchedScript(OFFSETS + luaScript([...HELPERS, 'outbox-len']), luaScript(['lease'], { LEASE_SHARE }), {
      head: 0,
      keys: 2,
      args: 7,
      answers: 2,
    }),
  },
  arPrime: { numberOfKeys: 4, lua: luaScript(['neg', 'prime']) },
  arAck: { lua: luaScript(['neg', 'ack'], { GROUP }) },
  arBalance: { numberOfKeys: 1, lua: luaScript([...HELPERS, 'balance']) },
  arGate: { numberOfKeys: 1, lua: luaScript([...HELPERS, 'rpm', 'gate']) },
  arCredit: { numberOfKeys: 1, lua: luaScript(['credit']) },
  arSnapshot: { lua: luaScript(['snapshot']) },
  arHit: { numberOfKeys: 1, lua: luaScript(['hit']) },
  arUnhit: { numberOfKeys: 1, lua: luaScript(['unhit']) },
};

type Scripted = RedisClient & {
  arReserve(...args: string[]): Promise<(number | string)[]>;
  arSettle(...args: string[]): Promise<(number | string)[]>;
  arLease(...args: string[]): Promise<(number | string)[]>;
  arPrime(...args: string[]): Promise<[string, string] | null>;
  arAck(...args: string[]): Promise<number>;
  arBalance(...args: string[]): Promise<[string, string] | null>;
  arGate(...args: string[]): Promise<[number, number]>;
  arCredit(...args: string[]): Promise<number | null>;
  arSnapshot(...args: string[]): Promise<string[][]>;
  arHit(...args: string[]): Promise<[number, number]>;
  arUnhit(...args: string[]): Promise<number>;
};

export interface RedisHotStoreOptions {
  /** Time allowed to connect, and for each command: an unreachable Redis fails fast (503). */
  timeoutMs?: number;
}

/** A connection of a cluster made while running (the subscriber, the writer's reader) may take its time to learn the slots. */
const START_WAIT_MS = 10_000;

interface ScriptCall {
  keys: string[];
  args: string[];
}

/** A batch of calls as one script call: the key count, each call's keys, then their arguments. */
function joinCalls(calls: ScriptCall[]): string[] {
  const keys: string[] = [];
  const args: string[] = [];
  for (const c of calls) {
    keys.push(...c.keys);
    args.push(...c.args);
  }
  return [String(keys.length), ...keys, ...args];
}

/** A batched script's flat answer (batchedScript), as one tuple of `width` values per call. */
function answersOf(flat: (number | string)[], width: number): (number | string)[][] {
  const out: (number | string)[][] = [];
  for (let i = 0; i < flat.length; i += width) out.push(flat.slice(i, i + width));
  return out;
}

/**
 * Runs a batch of calls as few script calls as the store allows: one on a single server; on a
 * cluster one per slot (a script's keys must share one), sent together and answered in order.
 */
function bySlot<T>(clustered: boolean, calls: ScriptCall[], run: (calls: ScriptCall[]) => Promise<T[]>): Promise<T[]> {
  if (!clustered) return run(calls);
  const groups = new Map<number, number[]>();
  calls.forEach((c, i) => {
    const slot = slotOf(c.keys[0]!);
    let g = groups.get(slot);
    if (!g) groups.set(slot, (g = []));
    g.push(i);
  });
  if (groups.size === 1) return run(calls);
  const out = new Array<T>(calls.length);
  return Promise.all(
    [...groups.values()].map(async (idx) => {
      const answers = await run(idx.map((i) => calls[i]!));
      idx.forEach((i, j) => (out[i] = answers[j]!));
    }),
  ).then(() => out);
}

export class RedisHotStore implements HotStore {
  readonly kind = 'redis';
  readonly durableSettle = true;
  readonly clustered: boolean;
  private readonly redis: Scripted;
  private sub?: RedisClient;
  /** Blocking outbox reads get a connection of their own, so they never hold up the rest. */
  private reader?: RedisClient;
  private readonly handlers = new Map<string, (message: string) => void>();
  /** Why the connection is down, if it is: more telling than "max retries reached". */
  private lastError?: Error;
  private readonly layout: RedisLayout;
  private readonly outbox: RedisOutbox;
  /**
   * Settles this process made that the writers have not acknowledged yet, for the day Redis
   * loses its data (redis-watch.ts).
   */
  private readonly loss: LossWatch;
  private readonly timeoutMs: number;
  /** A turn's reserve and settle calls leave in one write: a syscall less per turn. */
  private readonly turn = new Turn((flushAll) => {
    // A cluster writes to a connection per node: nothing single to cork.
    const socket = this.redis instanceof Cluster ? undefined : (this.redis as Redis).stream;
    socket?.cork();
    try {
      flushAll();
    } finally {
      socket?.uncork();
    }
  });
  private readonly reserves = new Batcher<ScriptCall, [number, number]>(
    (calls) =>
      bySlot(this.clustered, calls, (part) =>
        this.redis.arReserve(...joinCalls(part)).then((flat) => answersOf(flat, 2) as [number, number][]),
      ),
    this.turn,
  );
  private readonly settles = new Batcher<ScriptCall, [number, string, string, number]>(
    (calls) =>
      bySlot(this.clustered, calls, (part) =>
        this.redis
          .arSettle(...joinCalls(part))
          .then((flat) => answersOf(flat, 4) as [number, string, string, number][]),
      ),
    this.turn,
  );
  private readonly leases = new Batcher<ScriptCall, [number, number]>(
    (calls) =>
      bySlot(this.clustered, calls, (part) =>
        this.redis.arLease(...joinCalls(part)).then((flat) => answersOf(flat, 2) as [number, number][]),
      ),
    this.turn,
  );

  /**
   * The cold path's commands (a key's shared cache, an account's balance and its load), sent
   * with the turn's other calls: a burst of new keys and accounts writes to Redis once a turn,
   * not once a command (each write a syscall, which is most of what a command costs here).
   */
  private readonly inTurn = new Batcher<() => Promise<unknown>, unknown>(
    (sends) => Promise.all(sends.map((send) => send())),
    this.turn,
  );
  /** Shared-cache reads of one turn: one MGET (on a cluster, one per slot). */
  private readonly cacheReads = new Batcher<string, string | null>((keys) => this.mget(keys), this.turn);

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
    this.outbox = new RedisOutbox(this.redis, this.layout, this.clustered, (blockMs) => this.readerFor(blockMs), {
      ack: (...a) => this.redis.arAck(...a),
      snapshot: (...a) => this.redis.arSnapshot(...a),
    });
    this.loss = new LossWatch(
      this.redis,
      this.layout,
      async (req) => (await this.runSettle(req)).entryId,
      () => this.outbox.forgetGroups(),
    );
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

  /** A call's keys: the user's base key and the outbox shard it writes to (one slot). */
  private userCall(userId: string): string[] {
    return [this.layout.userBase(userId), this.layout.outboxOf(userId)];
  }

  private async mget(keys: string[]): Promise<(string | null)[]> {
    if (!this.clustered) return this.redis.mget(...keys);
    // A cluster's MGET takes one slot's keys: a read per key, sent together.
    return Promise.all(keys.map((k) => this.redis.get(k)));
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const [code, value] = await this.reserves.call({
      keys: this.userCall(req.userId),
      args: [
        req.reservationId,
        req.amount.toString(),
        String(req.ttlMs),
        req.keyId,
        String(req.rpmLimit),
        req.spend ? req.spend.limit.toString() : '-1',
        req.spend?.field ?? '',
        String(req.outboxMax),
      ],
    });
    switch (code) {
      case 1:
        return { status: 'ok', available: BigInt(value) };
      case 0:
        return { status: 'insufficient', available: BigInt(value) };
      case -1:
        return { status: 'unknown' };
      case -2:
        return { status: 'rate_limited', retryAfterMs: Number(value) };
      case -4:
        return { status: 'key_limit', spent: BigInt(value) };
      default:
        return { status: 'backlog' };
    }
  }

  async lease(req: LeaseRequest): Promise<LeaseResult> {
    const [code, value] = await this.leases.call({
      keys: this.userCall(req.userId),
      args: [
        req.leaseId,
        req.mode,
        req.need.toString(),
        req.grow.toString(),
        req.give.toString(),
        String(req.ttlMs),
        String(req.outboxMax),
      ],
    });
    switch (code) {
      case 1:
        return { status: 'ok', granted: BigInt(value) };
      case 0:
        return { status: 'insufficient', available: BigInt(value) };
      case -1:
        return { status: 'unknown' };
      case -5:
        return { status: 'gone' };
      default:
        return { status: 'backlog' };
    }
  }

  async settle(req: SettleRequest): Promise<SettleResult> {
    if (!req.record && req.cost !== 0n) throw new Error('a charge needs its usage record');
    const result = await this.runSettle(req);
    if (result.entryId) this.loss.keep(shardOf(req.userId), result.entryId, req);
    return result;
  }

  private async runSettle(req: SettleRequest): Promise<SettleResult> {
    const [ok, entryId, , taken] = await this.settles.call({
      keys: this.userCall(req.userId),
      args: [
        req.reservationId,
        req.cost.toString(),
        String(SETTLED_MEMORY_MS),
        req.userId,
        req.spendField ?? '',
        req.spendFieldBefore ?? '',
        req.record ? encodeRecord(req.record) : '',
        req.leaseId ?? '',
      ],
    });
    if (ok !== 1) return { duplicate: true };
    const result: SettleResult = { duplicate: false, entryId: entryId || undefined };
    if (req.leaseId) {
      if (taken === -1) result.leaseGone = true;
      else result.leaseTaken = BigInt(taken);
    }
    return result;
  }

  async whenCommitted(): Promise<void> {
    // Durable once appended (see durableSettle).
  }

  async primeBalance(userId: string, s: PrimeSnapshot): Promise<HotBalance | null> {
    const fields: string[] = [];
    for (const [f, v] of Object.entries(s.keySpend)) fields.push(f, v.toString());
    const k = this.layout.userKeys(userId);
    const r = (await this.inTurn.call(() =>
      this.redis.arPrime(
        k.acct,
        k.fixed,
        k.late,
        k.resv,
        s.balance.toString(),
        s.charged.toString(),
        randomUUID(),
        ...fields,
      ),
    )) as [string, string] | null;
    return r ? { balance: BigInt(r[0]), reserved: BigInt(r[1]) } : null;
  }

  async credit(userId: string, amount: bigint): Promise<void> {
    await this.redis.arCredit(this.layout.userKeys(userId).acct, amount.toString());
  }

  async balance(userId: string) {
    const r = (await this.inTurn.call(() => this.redis.arBalance(this.layout.userBase(userId)))) as string[] | null;
    return r ? { balance: BigInt(r[0]), reserved: BigInt(r[1]) } : null;
  }

  async forgetBalance(userId: string): Promise<void> {
    await this.redis.del(this.layout.userKeys(userId).acct);
  }

  async gate(userId: string, keyId: string, rpmLimit: number) {
    const [code, value] = await this.redis.arGate(this.layout.userBase(userId), keyId, String(rpmLimit));
    if (code === 1) return 'ok' as const;
    if (code === 0) return 'insufficient' as const;
    if (code === -1) return 'unknown' as const;
    return { retryAfterMs: Number(value) };
  }

  // ---- outbox (redis-outbox.ts) ----

  readOutbox(consumer: string, count: number, blockMs: number): Promise<OutboxEntry[]> {
    return this.outbox.read(consumer, count, blockMs);
  }

  ackOutbox(items: AckItem[]): Promise<void> {
    return items.length === 0 ? Promise.resolve() : this.outbox.ack(items);
  }

  claimAbandoned(consumer: string): Promise<number> {
    return this.outbox.claimAbandoned(
      consumer,
      async (name) => (await this.redis.exists(this.layout.writer(name))) === 1,
    );
  }

  async heartbeat(consumer: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.layout.writer(consumer), '1', 'PX', ttlMs);
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

  // ---- cache, counters, pub/sub ----

  getCached(key: string) {
    return this.cacheReads.call(this.layout.cache(key));
  }
  async setCached(key: string, value: string, ttlMs: number, opts: { onlyIfAbsent?: boolean } = {}) {
    const k = this.layout.cache(key);
    if (opts.onlyIfAbsent) await this.inTurn.call(() => this.redis.set(k, value, 'PX', ttlMs, 'NX'));
    else await this.inTurn.call(() => this.redis.set(k, value, 'PX', ttlMs));
  }

  async deleteCached(key: string) {
    await this.redis.del(this.layout.cache(key));
  }

  async hit(bucket: string, windowS: number) {
    const [count, ttl] = await this.redis.arHit(this.layout.hits(bucket), String(windowS));
    return { count, ttlS: Math.max(ttl, 1) };
  }
  async resetHits(bucket: string) {
    await this.redis.del(this.layout.hits(bucket));
  }
  async releaseHit(bucket: string) {
    await this.redis.arUnhit(this.layout.hits(bucket));
  }

  async publish(channel: string, message: string) {
    await this.redis.publish(this.layout.channel(channel), message);
  }

  async subscribe(channel: string, onMessage: (message: string) => void) {
    if (!this.sub) {
      this.sub = connectRedis(this.target, { lazyConnect: false, connectTimeout: this.timeoutMs });
      this.sub.on('error', () => {});
      this.sub.on('message', (ch: string, msg: string) => this.handlers.get(ch)?.(msg));
    }
    this.handlers.set(this.layout.channel(channel), onMessage);
    if (this.clustered) await whenReady(this.sub, START_WAIT_MS, () => this.lastError);
    await this.sub.subscribe(this.layout.channel(channel));
  }

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
    this.sub?.disconnect();
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
