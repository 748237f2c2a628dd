import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import {
  decodeRecord,
  encodeRecord,
  LEASE_SHARE,
  SETTLED_MEMORY_MS,
  type AckItem,
  type HotAccountSnapshot,
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

// Per user (one hash tag, so one slot): `acct` (hash: bal, cbase, gen, and the spend fields of
// keys with a cap), `res` (hash: live reservation id → "amount|keyId" for a key with a spend
// cap, else "amount"), `resx` (zset: id → expiry ms), `resv` (total held), `kheld` (hash: capped
// key → held), `done:<n>` (set: ids settled in the n-th SETTLED_MEMORY_MS of the clock).
// Global: `outbox` (stream, consumer group `writers`), `epoch` (changes when Redis lost its
// data), `writer:<name>` heartbeats. Each operation that reads and writes is one Lua script, so
// it is atomic and one round trip; expired holds are swept by the next script that looks at
// the user, so a crashed process never strands money.

const GROUP = 'writers';

// The scripts, as Redis runs them, put together once per process: their pieces are in ./lua/
// (lua.ts). A batched one's shared part (batch.ts) runs once per call, its body once per item.
// A command without numberOfKeys is given its key count with each call.
const HELPERS = ['neg', 'sweep'];
const COMMANDS: Record<string, { lua: string; numberOfKeys?: number }> = {
  arReserve: { lua: batchedScript(OFFSETS + luaScript([...HELPERS, 'rpm', 'outbox-len']), luaScript(['reserve']), { head: 1, keys: 1, args: 8, answers: 2 }) },
  arSettle: { lua: batchedScript(OFFSETS + luaScript([...HELPERS, 'settle-memo']), luaScript(['settle']), { head: 1, keys: 1, args: 8, answers: 4 }) },
  arLease: { lua: batchedScript(OFFSETS + luaScript([...HELPERS, 'outbox-len']), luaScript(['lease'], { LEASE_SHARE }), { head: 1, keys: 1, args: 7, answers: 2 }) },
  arPrime: { numberOfKeys: 3, lua: luaScript(['neg', 'prime']) },
  arAck: { lua: luaScript(['neg', 'ack'], { GROUP }) },
  arBalance: { numberOfKeys: 1, lua: luaScript([...HELPERS, 'balance']) },
  arGate: { numberOfKeys: 1, lua: luaScript([...HELPERS, 'rpm', 'gate']) },
  arCredit: { numberOfKeys: 1, lua: luaScript(['credit']) },
  arSnapshot: { lua: luaScript(['snapshot']) },
  arHit: { numberOfKeys: 1, lua: luaScript(['hit']) },
  arUnhit: { numberOfKeys: 1, lua: luaScript(['unhit']) },
};

type Scripted = Redis & {
  arReserve(...args: string[]): Promise<(number | string)[]>;
  arSettle(...args: string[]): Promise<(number | string)[]>;
  arLease(...args: string[]): Promise<(number | string)[]>;
  arPrime(...args: string[]): Promise<number>;
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

interface ScriptCall {
  keys: string[];
  args: string[];
}

/**
 * A batch of calls as one script call: the key count, the keys every call shares (`head`), each
 * call's keys, then their arguments.
 */
function joinCalls(head: string[], calls: ScriptCall[]): string[] {
  const keys: string[] = [...head];
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

/** Stream ids `ms-seq` compared as numbers. */
export function compareEntryIds(a: string, b: string): number {
  const [am, as] = a.split('-');
  const [bm, bs] = b.split('-');
  const d = Number(am) - Number(bm);
  return d !== 0 ? d : Number(as) - Number(bs);
}

export class RedisHotStore implements HotStore {
  readonly kind = 'redis';
  readonly durableSettle = true;
  private readonly redis: Scripted;
  private sub?: Redis;
  /** Blocking outbox reads get a connection of their own, so they never hold up the rest. */
  private reader?: Redis;
  private readonly handlers = new Map<string, (message: string) => void>();
  /** Why the connection is down, if it is: more telling than "max retries reached". */
  private lastError?: Error;
  private groupReady = false;
  /**
   * Settles this process made that the writers have not acknowledged yet. Redis is the durable
   * copy; this one is for the day Redis loses its data (a flush, a restart without AOF): the
   * new epoch is noticed and these are settled again (see `checkEpoch`).
   */
  private readonly retained = new Map<string, SettleRequest>();
  private watchTimer?: NodeJS.Timeout;
  private readonly outboxKey: string;
  private readonly timeoutMs: number;
  /** A turn's reserve and settle calls leave in one write: a syscall less per turn. */
  private readonly turn = new Turn((flushAll) => {
    const socket = this.redis.stream;
    socket?.cork();
    try {
      flushAll();
    } finally {
      socket?.uncork();
    }
  });
  private readonly reserves = new Batcher<ScriptCall, [number, number]>(
    (calls) => this.redis.arReserve(...joinCalls([this.outboxKey], calls)).then((flat) => answersOf(flat, 2) as [number, number][]),
    this.turn,
  );
  private readonly settles = new Batcher<ScriptCall, [number, string, string, number]>(
    (calls) => this.redis.arSettle(...joinCalls([this.outboxKey], calls)).then((flat) => answersOf(flat, 4) as [number, string, string, number][]),
    this.turn,
  );
  private readonly leases = new Batcher<ScriptCall, [number, number]>(
    (calls) => this.redis.arLease(...joinCalls([this.outboxKey], calls)).then((flat) => answersOf(flat, 2) as [number, number][]),
    this.turn,
  );

  /**
   * The cold path's commands (a key's shared cache, an account's balance and its load), sent
   * with the turn's other calls: a burst of new keys and accounts writes to Redis once a turn,
   * not once a command (each write a syscall, which is most of what a command costs here).
   */
  private readonly inTurn = new Batcher<() => Promise<unknown>, unknown>((sends) => Promise.all(sends.map((send) => send())), this.turn);
  /** Shared-cache reads of one turn: one MGET. */
  private readonly cacheReads = new Batcher<string, string | null>((keys) => this.redis.mget(...keys), this.turn);

  constructor(
    private readonly url: string,
    private readonly prefix = 'ar:',
    opts: RedisHotStoreOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.outboxKey = `${prefix}outbox`;
    this.redis = this.connect() as Scripted;
    this.redis.on('ready', () => (this.lastError = undefined));
    for (const [name, command] of Object.entries(COMMANDS)) this.redis.defineCommand(name, command);
  }

  private connect(extra: Record<string, unknown> = {}): Redis {
    const r = new Redis(this.url, {
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

  /**
   * A user's base key: the {user} hash tag keeps one user's keys in one slot. The scripts name
   * the rest from it (SWEEP's `bind`).
   */
  private userBase(userId: string): string {
    return `${this.prefix}{${userId}}`;
  }

  private userKeys(userId: string) {
    const p = this.userBase(userId);
    return { acct: `${p}:acct`, res: `${p}:res`, resv: `${p}:resv`, fixed: `${p}:fixed`, late: `${p}:late` };
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const [code, value] = await this.reserves.call({
      keys: [this.userBase(req.userId)],
      args: [
        req.reservationId, req.amount.toString(), String(req.ttlMs), req.keyId, String(req.rpmLimit),
        req.spend ? req.spend.limit.toString() : '-1', req.spend?.field ?? '', String(req.outboxMax),
      ],
    });
    switch (code) {
      case 1: return { status: 'ok', available: BigInt(value) };
      case 0: return { status: 'insufficient', available: BigInt(value) };
      case -1: return { status: 'unknown' };
      case -2: return { status: 'rate_limited', retryAfterMs: Number(value) };
      case -4: return { status: 'key_limit', spent: BigInt(value) };
      default: return { status: 'backlog' };
    }
  }

  async lease(req: LeaseRequest): Promise<LeaseResult> {
    const [code, value] = await this.leases.call({
      keys: [this.userBase(req.userId)],
      args: [req.leaseId, req.mode, req.need.toString(), req.grow.toString(), req.give.toString(), String(req.ttlMs), String(req.outboxMax)],
    });
    switch (code) {
      case 1: return { status: 'ok', granted: BigInt(value) };
      case 0: return { status: 'insufficient', available: BigInt(value) };
      case -1: return { status: 'unknown' };
      case -5: return { status: 'gone' };
      default: return { status: 'backlog' };
    }
  }

  async settle(req: SettleRequest): Promise<SettleResult> {
    if (!req.record && req.cost !== 0n) throw new Error('a charge needs its usage record');
    const result = await this.runSettle(req);
    if (result.entryId) this.retained.set(result.entryId, req);
    return result;
  }

  private async runSettle(req: SettleRequest): Promise<SettleResult> {
    const [ok, entryId, , taken] = await this.settles.call({
      keys: [this.userBase(req.userId)],
      args: [
        req.reservationId, req.cost.toString(), String(SETTLED_MEMORY_MS), req.userId,
        req.spendField ?? '', req.spendFieldBefore ?? '', req.record ? encodeRecord(req.record) : '', req.leaseId ?? '',
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

  async primeBalance(userId: string, s: PrimeSnapshot): Promise<void> {
    const fields: string[] = [];
    for (const [f, v] of Object.entries(s.keySpend)) fields.push(f, v.toString());
    const k = this.userKeys(userId);
    await this.inTurn.call(() => this.redis.arPrime(k.acct, k.fixed, k.late, s.balance.toString(), s.charged.toString(), randomUUID(), ...fields));
  }

  async credit(userId: string, amount: bigint): Promise<void> {
    await this.redis.arCredit(this.userKeys(userId).acct, amount.toString());
  }

  async balance(userId: string) {
    const r = (await this.inTurn.call(() => this.redis.arBalance(this.userBase(userId)))) as string[] | null;
    return r ? { balance: BigInt(r[0]), reserved: BigInt(r[1]) } : null;
  }

  async forgetBalance(userId: string): Promise<void> {
    await this.redis.del(this.userKeys(userId).acct);
  }

  async gate(userId: string, keyId: string, rpmLimit: number) {
    const [code, value] = await this.redis.arGate(this.userBase(userId), keyId, String(rpmLimit));
    if (code === 1) return 'ok' as const;
    if (code === 0) return 'insufficient' as const;
    if (code === -1) return 'unknown' as const;
    return { retryAfterMs: Number(value) };
  }

  // ---- outbox ----

  private async ensureGroup(): Promise<void> {
    if (this.groupReady) return;
    try {
      // From 0: entries appended before any writer existed are drained too.
      await this.redis.xgroup('CREATE', this.outboxKey, GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
    this.groupReady = true;
  }

  async readOutbox(consumer: string, count: number, blockMs: number): Promise<OutboxEntry[]> {
    await this.ensureGroup();
    // A blocking read must outlast its block; a link that went silent still fails, later.
    this.reader ??= this.connect({ commandTimeout: Math.max(blockMs, 1000) + this.timeoutMs, enableAutoPipelining: false });
    try {
      // Own entries first: those read before a failed commit, or claimed from a dead writer.
      const own = parseStream(await this.reader.xreadgroup('GROUP', GROUP, consumer, 'COUNT', String(count), 'STREAMS', this.outboxKey, '0'));
      if (own.deleted.length > 0) await this.redis.xack(this.outboxKey, GROUP, ...own.deleted);
      if (own.entries.length > 0) return own.entries;
      // BLOCK 0 would wait forever: a non-blocking read is one without BLOCK.
      const res = blockMs > 0
        ? await this.reader.xreadgroup('GROUP', GROUP, consumer, 'COUNT', String(count), 'BLOCK', String(blockMs), 'STREAMS', this.outboxKey, '>')
        : await this.reader.xreadgroup('GROUP', GROUP, consumer, 'COUNT', String(count), 'STREAMS', this.outboxKey, '>');
      return parseStream(res).entries;
    } catch (err) {
      // The group went with the data (a flush): make it again on the next read.
      if (String((err as Error).message).includes('NOGROUP')) this.groupReady = false;
      throw err;
    }
  }

  async ackOutbox(items: AckItem[]): Promise<void> {
    if (items.length === 0) return;
    const accounts: string[] = [];
    const index = new Map<string, number>();
    const args: string[] = [String(items.length)];
    for (const it of items) {
      const k = this.userKeys(it.entry.record.userId);
      let i = index.get(k.acct);
      if (i === undefined) {
        accounts.push(k.acct, k.fixed, k.late);
        i = accounts.length / 3;
        index.set(k.acct, i);
      }
      const kind = it.kind === 'inserted' ? 'I' : it.kind === 'redelivered' ? 'R' : it.kind === 'duplicate' ? 'D' : 'X';
      args.push(it.entry.id, String(i), it.entry.record.costNano.toString(), it.entry.generation, it.entry.spendField, kind, it.chargedAfter.toString());
    }
    await this.redis.arAck(String(1 + accounts.length), this.outboxKey, ...accounts, ...args);
  }

  async claimAbandoned(consumer: string): Promise<number> {
    await this.ensureGroup();
    const consumers = (await this.redis.xinfo('CONSUMERS', this.outboxKey, GROUP)) as unknown[][];
    let claimed = 0;
    for (const c of consumers) {
      const info = fieldsOf(c);
      const name = String(info.name);
      if (name === consumer) continue;
      if ((await this.redis.exists(`${this.prefix}writer:${name}`)) === 1) continue;
      if (Number(info.pending) > 0) {
        const pending = (await this.redis.xpending(this.outboxKey, GROUP, '-', '+', 10_000, name)) as [string, string, number, number][];
        const ids = pending.map((p) => p[0]);
        for (let i = 0; i < ids.length; i += 500) {
          const got = (await this.redis.xclaim(this.outboxKey, GROUP, consumer, 0, ...ids.slice(i, i + 500), 'JUSTID')) as string[];
          claimed += got.length;
        }
      }
      await this.redis.xgroup('DELCONSUMER', this.outboxKey, GROUP, name);
    }
    return claimed;
  }

  async heartbeat(consumer: string, ttlMs: number): Promise<void> {
    await this.redis.set(`${this.prefix}writer:${consumer}`, '1', 'PX', ttlMs);
  }

  async outboxLength(): Promise<number> {
    return this.redis.xlen(this.outboxKey);
  }

  async snapshotAccounts(): Promise<HotAccountSnapshot[]> {
    const users: string[] = [];
    let cursor = '0';
    const re = new RegExp(`^${escapeRe(this.prefix)}\\{([^}]+)\\}:acct$`);
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${this.prefix}{*}:acct`, 'COUNT', 1000);
      cursor = next;
      for (const k of keys) {
        const m = re.exec(k);
        if (m) users.push(m[1]);
      }
    } while (cursor !== '0');
    if (users.length === 0) return [];
    const keys: string[] = [this.outboxKey];
    for (const u of users) {
      const k = this.userKeys(u);
      keys.push(k.acct, k.res, k.resv);
    }
    const rows = await this.redis.arSnapshot(String(keys.length), ...keys, ...users);
    return rows
      .filter((r) => r[1] !== '')
      .map((r) => ({
        userId: r[0],
        balance: BigInt(r[1]),
        reserved: BigInt(r[2]),
        holds: BigInt(r[3]),
        pendingAccounted: BigInt(r[4]),
        pendingUnaccounted: BigInt(r[5]),
      }));
  }

  // ---- surviving a Redis that lost data ----

  /**
   * Watches for Redis losing data: a restart (its run id changes; with AOF `everysec` the last
   * second of writes may be gone) or a flush (the epoch key is gone). Then every charge this
   * process settled that is neither in the outbox nor committed in Postgres (`committed` says
   * which are) was lost, and is settled again. Otherwise, charges the writers acknowledged are
   * forgotten. `onLost` hears of it first: whatever this process counted on holding (its
   * leases) may be gone. Called by the gateway, not by CLI commands.
   */
  async startWatching(opts: {
    intervalMs?: number;
    committed: (settleIds: string[]) => Promise<Set<string>>;
    onReplay?: (count: number) => void;
    onLost?: () => void;
  }): Promise<void> {
    this.committed = opts.committed;
    this.onReplay = opts.onReplay;
    this.onLost = opts.onLost;
    this.instance = await this.currentInstance();
    this.watchTimer = setInterval(() => void this.watch().catch(() => {}), opts.intervalMs ?? 1000);
    this.watchTimer.unref();
  }

  private committed?: (settleIds: string[]) => Promise<Set<string>>;
  private onReplay?: (count: number) => void;
  private onLost?: () => void;
  private instance?: string;

  /** Which Redis this is: its run id and the epoch key (created if missing). */
  private async currentInstance(): Promise<string> {
    const info = await this.redis.info('server');
    const runId = /run_id:(\w+)/.exec(info)?.[1] ?? '';
    await this.redis.set(`${this.prefix}epoch`, randomUUID(), 'NX');
    return `${runId}/${await this.redis.get(`${this.prefix}epoch`)}`;
  }

  /** One round of the watch: the cheap check while the instance is the same, the audit otherwise. */
  async watch(): Promise<void> {
    const before = await this.currentInstance();
    if (before !== this.instance) {
      this.onLost?.();
      await this.audit();
      this.instance = before;
      return;
    }
    if (this.retained.size === 0) return;
    // Entries older than the oldest one still in the stream have all been acknowledged, unless
    // the stream was lost in between: the instance is read again after the stream, and a change
    // leaves everything for the audit of the next round.
    const first = (await this.redis.xrange(this.outboxKey, '-', '+', 'COUNT', 1))[0]?.[0];
    if ((await this.currentInstance()) !== before) return;
    // Kept in the order settles returned, which is the stream's order: the walk stops at the
    // first entry still there instead of comparing every retained one each round.
    for (const id of this.retained.keys()) {
      if (first !== undefined && compareEntryIds(id, first) >= 0) break;
      this.retained.delete(id);
    }
  }

  /** Settles again what is neither in the outbox nor in Postgres. */
  async audit(): Promise<void> {
    this.groupReady = false; // the group may have gone with the data
    await this.ensureGroup();
    if (this.retained.size === 0 || !this.committed) return;
    const entries = [...this.retained];
    const present = new Set<string>();
    const pipeline = this.redis.pipeline();
    for (const [id] of entries) pipeline.xrange(this.outboxKey, id, id);
    const results = (await pipeline.exec()) ?? [];
    results.forEach(([err, rows], i) => {
      if (!err && Array.isArray(rows) && rows.length > 0) present.add(entries[i][0]);
    });
    const missing = entries.filter(([id]) => !present.has(id));
    const done = await this.committed(missing.map(([, req]) => req.record!.settleId));
    let replayed = 0;
    for (const [id, req] of missing) {
      if (!done.has(req.record!.settleId)) {
        // Forgotten only once settled again: a failure here leaves it for the next audit.
        const r = await this.runSettle(req);
        if (r.entryId) this.retained.set(r.entryId, req);
        replayed++;
      }
      this.retained.delete(id);
    }
    if (replayed > 0) this.onReplay?.(replayed);
  }

  get retainedCount(): number {
    return this.retained.size;
  }

  // ---- cache, counters, pub/sub ----

  getCached(key: string) {
    return this.cacheReads.call(`${this.prefix}c:${key}`);
  }
  async setCached(key: string, value: string, ttlMs: number, opts: { onlyIfAbsent?: boolean } = {}) {
    const k = `${this.prefix}c:${key}`;
    if (opts.onlyIfAbsent) await this.inTurn.call(() => this.redis.set(k, value, 'PX', ttlMs, 'NX'));
    else await this.inTurn.call(() => this.redis.set(k, value, 'PX', ttlMs));
  }

  async deleteCached(key: string) {
    await this.redis.del(`${this.prefix}c:${key}`);
  }

  async hit(bucket: string, windowS: number) {
    const [count, ttl] = await this.redis.arHit(`${this.prefix}h:${bucket}`, String(windowS));
    return { count, ttlS: Math.max(ttl, 1) };
  }
  async resetHits(bucket: string) {
    await this.redis.del(`${this.prefix}h:${bucket}`);
  }
  async releaseHit(bucket: string) {
    await this.redis.arUnhit(`${this.prefix}h:${bucket}`);
  }

  async publish(channel: string, message: string) {
    await this.redis.publish(`${this.prefix}${channel}`, message);
  }

  async subscribe(channel: string, onMessage: (message: string) => void) {
    if (!this.sub) {
      this.sub = new Redis(this.url, { lazyConnect: false, connectTimeout: this.timeoutMs });
      this.sub.on('error', () => {});
      this.sub.on('message', (ch: string, msg: string) => this.handlers.get(ch)?.(msg));
    }
    this.handlers.set(`${this.prefix}${channel}`, onMessage);
    await this.sub.subscribe(`${this.prefix}${channel}`);
  }

  async ping() {
    try {
      await this.redis.ping();
    } catch (err) {
      throw this.lastError ?? err;
    }
  }

  async close() {
    if (this.watchTimer) clearInterval(this.watchTimer);
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
    if (r.status === 'ready') await r.quit().catch(() => r.disconnect());
    else r.disconnect();
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** XINFO answers are flat [name, value, name, value…] lists. */
function fieldsOf(list: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i + 1 < list.length; i += 2) out[String(list[i])] = list[i + 1];
  return out;
}

type StreamReply = [string, [string, string[] | null][]][] | null;

function parseStream(res: unknown): { entries: OutboxEntry[]; deleted: string[] } {
  const out: OutboxEntry[] = [];
  const deleted: string[] = [];
  for (const [, entries] of (res as StreamReply) ?? []) {
    for (const [id, fields] of entries) {
      if (!fields) {
        deleted.push(id); // deleted while pending: nothing left to write
        continue;
      }
      const f: Record<string, string> = {};
      for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]] = fields[i + 1];
      out.push({ id, record: decodeRecord(f.r), generation: f.g ?? '', spendField: f.kf ?? '' });
    }
  }
  return { entries: out, deleted };
}
