// What every process shares besides the money: the key cache and the fixed-window counters, one
// Redis key each, in any slot (redis-layout.ts).

import { Batcher, type Turn } from './batch.js';
import type { Counters, SharedCache } from './hot.js';
import { luaScript, type LuaCommand } from './lua.js';
import type { RedisClient } from './redis-connect.js';
import type { RedisLayout } from './redis-layout.js';

export const COUNTER_COMMANDS: Record<string, LuaCommand> = {
  arHit: { numberOfKeys: 1, lua: luaScript(['hit']) },
  arUnhit: { numberOfKeys: 1, lua: luaScript(['unhit']) },
};

export type CounterScripts = {
  arHit(...args: string[]): Promise<[number, number]>;
  arUnhit(...args: string[]): Promise<number>;
};

export class RedisCache implements SharedCache, Counters {
  /** Shared-cache reads of one turn: one MGET (on a cluster, one per slot). */
  private readonly cacheReads: Batcher<string, string | null>;

  constructor(
    private readonly redis: RedisClient & CounterScripts,
    private readonly layout: RedisLayout,
    private readonly clustered: boolean,
    turn: Turn,
    /**
     * The cold path's commands, sent with the turn's other calls: a burst of new keys writes to
     * Redis once a turn, not once a command.
     */
    private readonly inTurn: Batcher<() => Promise<unknown>, unknown>,
  ) {
    this.cacheReads = new Batcher<string, string | null>((keys) => this.mget(keys), turn);
  }

  private async mget(keys: string[]): Promise<(string | null)[]> {
    if (!this.clustered) return this.redis.mget(...keys);
    // A cluster's MGET takes one slot's keys: a read per key, sent together.
    return Promise.all(keys.map((k) => this.redis.get(k)));
  }

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
}
