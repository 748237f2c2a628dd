// The in-process twin of redis-cache.ts, for the embedded default: the shared key cache and the
// fixed-window counters, each value with its expiry, let go as Redis expires its keys.

import type { Clock } from '../clock.js';
import type { Counters, SharedCache } from './hot.js';

/** The fewest entries a map of expiring values holds before it is cleared of the expired ones. */
const PRUNE_FLOOR = 10_000;

export class MemoryCache implements SharedCache, Counters {
  private readonly cache = new Map<string, { value: string; expires: number }>();
  private readonly hits = new Map<string, { count: number; expires: number }>();
  /** The sizes at which the two maps are next cleared of what expired (dropExpired). */
  private cachePrune = PRUNE_FLOOR;
  private hitsPrune = PRUNE_FLOOR;

  constructor(private readonly clock: Pick<Clock, 'now'>) {}

  async getCached(key: string) {
    const entry = this.cache.get(key);
    if (!entry) return null;
    if (entry.expires <= this.clock.now()) {
      this.cache.delete(key);
      return null;
    }
    return entry.value;
  }
  async setCached(key: string, value: string, ttlMs: number, opts: { onlyIfAbsent?: boolean } = {}) {
    if (opts.onlyIfAbsent && (await this.getCached(key)) !== null) return;
    const now = this.clock.now();
    this.cachePrune = dropExpired(this.cache, now, this.cachePrune);
    this.cache.set(key, { value, expires: now + ttlMs });
  }

  async deleteCached(key: string) {
    this.cache.delete(key);
  }

  /** Counts one event in `bucket`'s window, as of `now` (the store's requests-a-minute check too). */
  countHit(bucket: string, windowS: number, now: number) {
    let entry = this.hits.get(bucket);
    if (!entry || entry.expires <= now) {
      this.hitsPrune = dropExpired(this.hits, now, this.hitsPrune);
      entry = { count: 0, expires: now + windowS * 1000 };
      this.hits.set(bucket, entry);
    }
    entry.count += 1;
    return { count: entry.count, ttlS: Math.max(1, Math.ceil((entry.expires - now) / 1000)) };
  }

  async hit(bucket: string, windowS: number) {
    return this.countHit(bucket, windowS, this.clock.now());
  }
  async resetHits(bucket: string) {
    this.hits.delete(bucket);
  }
  async releaseHit(bucket: string) {
    const entry = this.hits.get(bucket);
    if (entry && entry.expires > this.clock.now() && entry.count > 0) entry.count -= 1;
  }
}

/**
 * What Redis's own expiry does for its keys: entries past their time leave the map once it has
 * grown to `at` entries, and the next clearing waits until it has doubled what stayed, so each
 * entry is looked at a bounded number of times however many are alive (a shared key cache of
 * every key met in ten minutes, say). Returns the size of the next clearing.
 */
function dropExpired(map: Map<string, { expires: number }>, now: number, at: number): number {
  if (map.size < at) return at;
  for (const [k, e] of map) if (e.expires <= now) map.delete(k);
  return Math.max(PRUNE_FLOOR, map.size * 2);
}
