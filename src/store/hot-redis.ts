import { Redis } from 'ioredis';
import { SETTLED_MEMORY_MS, type HotStore, type ReserveResult, type SettleResult } from './hot.js';

// Reservation state per user: a hash id → amount, a sorted set id → expiry (ms), and the
// running total. Lua keeps each operation one atomic round trip; expired reservations are
// swept by the next operation that looks at the user, so a crash never strands money.
// A settled id stays in the hash as SETTLED (holding nothing) for SETTLED_MEMORY_MS, so that a
// repeated settle charges nothing; the sweep drops it like an expired hold.
const SWEEP = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for _, id in ipairs(expired) do
  local a = redis.call('HGET', KEYS[2], id)
  if a then
    if a ~= 'settled' then redis.call('DECRBY', KEYS[4], a) end
    redis.call('HDEL', KEYS[2], id)
  end
end
if #expired > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now) end
`;

const RESERVE = `${SWEEP}
local bal = redis.call('GET', KEYS[1])
if not bal then return {-1, 0} end
local available = tonumber(bal) - tonumber(redis.call('GET', KEYS[4]) or '0')
local amount = tonumber(ARGV[2])
if amount > available then return {0, available} end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[3]), ARGV[1])
redis.call('INCRBY', KEYS[4], ARGV[2])
return {1, available - amount}
`;

const SETTLE = `${SWEEP}
local a = redis.call('HGET', KEYS[2], ARGV[1])
if a == 'settled' then return {1, 0} end
if a then
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('DECRBY', KEYS[4], a)
end
local bal = redis.call('GET', KEYS[1])
if not bal then return {0, 0} end
bal = tonumber(bal)
local charge = tonumber(ARGV[2])
if charge > bal then charge = bal end
if charge < 0 then charge = 0 end
redis.call('DECRBY', KEYS[1], charge)
redis.call('HSET', KEYS[2], ARGV[1], 'settled')
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[3]), ARGV[1])
return {1, charge}
`;

const BALANCE = `${SWEEP}
local bal = redis.call('GET', KEYS[1])
if not bal then return nil end
return {bal, redis.call('GET', KEYS[4]) or '0'}
`;

const CREDIT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('INCRBY', KEYS[1], ARGV[1]) end
return nil
`;

const HIT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('TTL', KEYS[1])}
`;

type Scripted = Redis & {
  arReserve(...args: string[]): Promise<[number, number]>;
  arSettle(...args: string[]): Promise<[number, number]>;
  arBalance(...args: string[]): Promise<[string, string] | null>;
  arCredit(...args: string[]): Promise<number | null>;
  arHit(...args: string[]): Promise<[number, number]>;
};

export class RedisHotStore implements HotStore {
  readonly kind = 'redis';
  private readonly redis: Scripted;
  private sub?: Redis;
  private readonly handlers = new Map<string, (message: string) => void>();
  /** Why the connection is down, if it is: more telling than "max retries reached". */
  private lastError?: Error;

  constructor(
    private readonly url: string,
    private readonly prefix = 'ar:',
  ) {
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableAutoPipelining: true }) as Scripted;
    this.redis.on('error', (err: Error) => {
      // Reported through ping()/readyz; ioredis reconnects by itself.
      this.lastError = err;
    });
    this.redis.on('ready', () => (this.lastError = undefined));
    this.redis.defineCommand('arReserve', { numberOfKeys: 4, lua: RESERVE });
    this.redis.defineCommand('arSettle', { numberOfKeys: 4, lua: SETTLE });
    this.redis.defineCommand('arBalance', { numberOfKeys: 4, lua: BALANCE });
    this.redis.defineCommand('arCredit', { numberOfKeys: 1, lua: CREDIT });
    this.redis.defineCommand('arHit', { numberOfKeys: 1, lua: HIT });
  }

  /** The {user} hash tag keeps one user's keys in one slot, should this run on Redis Cluster. */
  private keys(userId: string): string[] {
    const p = `${this.prefix}{${userId}}`;
    return [`${p}:bal`, `${p}:res`, `${p}:resx`, `${p}:resv`];
  }

  async reserve(userId: string, id: string, amount: bigint, ttlMs: number): Promise<ReserveResult> {
    const [code, available] = await this.redis.arReserve(...this.keys(userId), id, amount.toString(), String(ttlMs));
    return { status: code === 1 ? 'ok' : code === 0 ? 'insufficient' : 'unknown', available: BigInt(available) };
  }

  async settle(userId: string, id: string, cost: bigint): Promise<SettleResult> {
    const [known, charged] = await this.redis.arSettle(...this.keys(userId), id, cost.toString(), String(SETTLED_MEMORY_MS));
    return { known: known === 1, charged: BigInt(charged) };
  }

  async primeBalance(userId: string, balance: bigint): Promise<void> {
    await this.redis.set(this.keys(userId)[0], balance.toString(), 'NX');
  }

  async credit(userId: string, amount: bigint): Promise<void> {
    await this.redis.arCredit(this.keys(userId)[0], amount.toString());
  }

  async balance(userId: string) {
    const r = await this.redis.arBalance(...this.keys(userId));
    return r ? { balance: BigInt(r[0]), reserved: BigInt(r[1]) } : null;
  }

  async forgetBalance(userId: string): Promise<void> {
    await this.redis.del(...this.keys(userId));
  }

  getCached(key: string) {
    return this.redis.get(`${this.prefix}c:${key}`);
  }
  async setCached(key: string, value: string, ttlMs: number, opts: { onlyIfAbsent?: boolean } = {}) {
    if (opts.onlyIfAbsent) await this.redis.set(`${this.prefix}c:${key}`, value, 'PX', ttlMs, 'NX');
    else await this.redis.set(`${this.prefix}c:${key}`, value, 'PX', ttlMs);
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

  async publish(channel: string, message: string) {
    await this.redis.publish(`${this.prefix}${channel}`, message);
  }

  async subscribe(channel: string, onMessage: (message: string) => void) {
    if (!this.sub) {
      this.sub = new Redis(this.url, { lazyConnect: false });
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
    this.sub?.disconnect();
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
