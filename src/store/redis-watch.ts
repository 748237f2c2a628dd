// Surviving a Redis that lost data. Redis is the durable copy of a settled charge until the
// usage writer commits it to Postgres; if Redis loses it (a restart without AOF, a flush, a
// cluster failover to a replica that had not received the last writes) the charge would be lost.
// So each process keeps what it settled until a writer acknowledged it, and watches each shard's
// server: its run id (a restart or a failover changes it) and the shard's epoch key (a flush
// removes it). When a shard's changes, its charges that are neither in its stream nor
// committed in Postgres are settled again.

import { randomUUID } from 'node:crypto';
import type { SettleRequest } from './hot.js';
import { masterOf, type RedisClient } from './redis-connect.js';
import { RedisLayout, SHARDS, slotOf } from './redis-layout.js';

/** Stream ids `ms-seq` compared as numbers. */
export function compareEntryIds(a: string, b: string): number {
  const [am, as] = a.split('-');
  const [bm, bs] = b.split('-');
  const d = Number(am) - Number(bm);
  return d !== 0 ? d : Number(as) - Number(bs);
}

export interface WatchOptions {
  intervalMs?: number;
  /** Which of these settle ids Postgres has. */
  committed: (settleIds: string[]) => Promise<Set<string>>;
  onReplay?: (count: number) => void;
  /** Whatever this process counted on holding (its leases) may be gone. */
  onLost?: () => void;
}

export class LossWatch {
  /** Per shard: entry id → the settle that wrote it, in the stream's order. */
  private readonly retained: Map<string, SettleRequest>[] = Array.from({ length: SHARDS }, () => new Map());
  private instances: string[] = [];
  private timer?: NodeJS.Timeout;
  private opts?: WatchOptions;

  constructor(
    private readonly redis: RedisClient,
    private readonly layout: RedisLayout,
    /** Settles again, as the store does: the new entry's id, if one was written. */
    private readonly settleAgain: (req: SettleRequest) => Promise<string | undefined>,
    /** The stream's consumer group may have gone with the data. */
    private readonly onGroupsLost: () => void,
  ) {}

  keep(shard: number, entryId: string, req: SettleRequest): void {
    this.retained[shard]!.set(entryId, req);
  }

  get retainedCount(): number {
    return this.retained.reduce((n, m) => n + m.size, 0);
  }

  async start(opts: WatchOptions): Promise<void> {
    this.opts = opts;
    this.instances = await this.currentInstances();
    this.timer = setInterval(() => void this.watch().catch(() => {}), opts.intervalMs ?? 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Each shard's server (run id) and epoch, the epoch made if missing. */
  private async currentInstances(): Promise<string[]> {
    const runIds = new Map<string, Promise<string>>();
    const runIdOf = (shard: number) => {
      const node = masterOf(this.redis, slotOf(this.layout.epoch(shard)));
      const where = node ? `${node.options.host}:${node.options.port}` : '?';
      let p = runIds.get(where);
      if (!p)
        runIds.set(
          where,
          (p = node ? node.info('server').then((info) => /run_id:(\w+)/.exec(info)?.[1] ?? '') : Promise.resolve('')),
        );
      return p;
    };
    return Promise.all(
      Array.from({ length: SHARDS }, async (_, shard) => {
        const key = this.layout.epoch(shard);
        // SET NX … GET: the epoch as it is, made first if it is missing, in one step.
        const mine = randomUUID();
        const epoch = ((await this.redis.call('SET', key, mine, 'NX', 'GET')) as string | null) ?? mine;
        return `${await runIdOf(shard)}/${epoch}`;
      }),
    );
  }

  /** One round: the cheap check while every shard's instance is the same, the audit otherwise. */
  async watch(): Promise<void> {
    const before = await this.currentInstances();
    const changed = before.flatMap((inst, shard) => (inst !== this.instances[shard] ? [shard] : []));
    if (changed.length > 0) {
      this.opts?.onLost?.();
      this.onGroupsLost();
      for (const shard of changed) await this.audit(shard);
      this.instances = before;
      return;
    }
    if (this.retainedCount === 0) return;
    // Entries older than the oldest one still in a stream have all been acknowledged, unless the
    // stream was lost in between: the instances are read again after the streams, and a change
    // leaves everything for the audit of the next round.
    const firsts = await Promise.all(
      this.retained.map(async (kept, shard) =>
        kept.size === 0
          ? undefined
          : (await this.redis.xrange(this.layout.outboxes[shard]!, '-', '+', 'COUNT', 1))[0]?.[0],
      ),
    );
    const after = await this.currentInstances();
    if (after.some((inst, shard) => inst !== before[shard])) return;
    this.retained.forEach((kept, shard) => {
      const first = firsts[shard];
      // Kept in the order settles returned, which is the stream's order: the walk stops at the
      // first entry still there instead of comparing every retained one each round.
      for (const id of kept.keys()) {
        if (first !== undefined && compareEntryIds(id, first) >= 0) break;
        kept.delete(id);
      }
    });
  }

  /** Settles again what one shard lost: neither in its stream nor in Postgres. */
  async audit(shard: number): Promise<void> {
    const kept = this.retained[shard]!;
    if (kept.size === 0 || !this.opts) return;
    const stream = this.layout.outboxes[shard]!;
    const entries = [...kept];
    const present = await Promise.all(
      entries.map(async ([id]) => (await this.redis.xrange(stream, id, id)).length > 0),
    );
    const missing = entries.filter((_, i) => !present[i]);
    const done = await this.opts.committed(missing.map(([, req]) => req.record!.settleId));
    let replayed = 0;
    for (const [id, req] of missing) {
      if (!done.has(req.record!.settleId)) {
        // Forgotten only once settled again: a failure here leaves it for the next audit.
        const again = await this.settleAgain(req);
        if (again) kept.set(again, req);
        replayed++;
      }
      kept.delete(id);
    }
    if (replayed > 0) this.opts.onReplay?.(replayed);
  }
}
