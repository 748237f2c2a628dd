// The outbox in Redis: SHARDS streams (redis-layout.ts), one consumer group each, drained by the
// usage writers (src/billing/outbox-writer.ts). On one server a read takes every shard in one
// XREADGROUP; a cluster cannot (the streams are in different slots), so each shard is read on
// its own there, without blocking, and an empty round waits a moment before the next.

import type { Redis } from 'ioredis';
import { decodeRecord, type AckItem, type HotAccountSnapshot, type OutboxEntry } from './hot.js';
import { luaScript, type LuaCommand } from './lua.js';
import { masters, whenReady, type RedisClient } from './redis-connect.js';
import { RedisLayout, shardOf } from './redis-layout.js';

export const GROUP = 'writers';

/** Entries acknowledged per script call. */
const ACK_PART = 1000;

/**
 * A cluster cannot block on every shard at once: a blocking read there reads them all, then
 * again every this many ms, until something comes or the block is over. 16 shards × 10 reads a
 * second per idle writer; a record waits up to this long longer to reach Postgres (its charge
 * is in Redis already).
 */
const CLUSTER_POLL_MS = 100;

// Both are given their key count with each call.
export const OUTBOX_COMMANDS: Record<string, LuaCommand> = {
  arAck: { lua: luaScript(['neg', 'ack'], { GROUP }) },
  arSnapshot: { lua: luaScript(['snapshot']) },
};

export type OutboxScripts = {
  arAck(count: string, ...keysAndArgs: string[]): Promise<number>;
  arSnapshot(count: string, ...keysAndArgs: string[]): Promise<string[][]>;
};

export class RedisOutbox {
  private readonly groups = new Set<string>();

  constructor(
    private readonly redis: RedisClient & OutboxScripts,
    private readonly layout: RedisLayout,
    private readonly clustered: boolean,
    /** The blocking reads' own connection, made when first needed. */
    private readonly readerOf: (blockMs: number) => RedisClient,
  ) {}

  /** The streams this outbox drains. */
  get streams(): readonly string[] {
    return this.layout.outboxes;
  }

  private async ensureGroups(streams: readonly string[]): Promise<void> {
    const missing = streams.filter((s) => !this.groups.has(s));
    await Promise.all(
      missing.map(async (stream) => {
        try {
          // From 0: entries appended before any writer existed are drained too.
          await this.redis.xgroup('CREATE', stream, GROUP, '0', 'MKSTREAM');
        } catch (err) {
          if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
        }
        this.groups.add(stream);
      }),
    );
  }

  /** The group went with the data (a flush, a failover that lost it): make it again. */
  forgetGroups(): void {
    this.groups.clear();
  }

  async read(consumer: string, count: number, blockMs: number): Promise<OutboxEntry[]> {
    const streams = this.streams;
    await this.ensureGroups(streams);
    const reader = this.readerOf(blockMs);
    // A cluster's new connection refuses commands until it knows the slots.
    if (this.clustered) await whenReady(reader, 10_000, () => undefined);
    try {
      // Own entries first: those read before a failed commit, or claimed from a dead writer.
      const own = await this.readFrom(reader, consumer, count, streams, '0', 0);
      if (own.length > 0) return own.slice(0, count);
      if (!this.clustered) return (await this.readFrom(reader, consumer, count, streams, '>', blockMs)).slice(0, count);
      const until = Date.now() + blockMs;
      for (;;) {
        const fresh = await this.readFrom(reader, consumer, count, streams, '>', 0);
        const left = until - Date.now();
        // What is past `count` stays pending for this consumer: the next read's "own entries".
        if (fresh.length > 0 || left <= 0) return fresh.slice(0, count);
        await sleep(Math.min(left, CLUSTER_POLL_MS));
      }
    } catch (err) {
      if (String((err as Error).message).includes('NOGROUP')) this.forgetGroups();
      throw err;
    }
  }

  private async readFrom(
    reader: RedisClient,
    consumer: string,
    count: number,
    streams: readonly string[],
    from: string,
    blockMs: number,
  ): Promise<OutboxEntry[]> {
    const block = blockMs > 0 ? ['BLOCK', String(blockMs)] : [];
    const calls = this.clustered ? streams.map((s) => [s]) : [streams];
    const replies = await Promise.all(
      calls.map((group) =>
        reader.call(
          'XREADGROUP',
          'GROUP',
          GROUP,
          consumer,
          'COUNT',
          String(count),
          ...block,
          'STREAMS',
          ...group,
          ...group.map(() => from),
        ),
      ),
    );
    const out: OutboxEntry[] = [];
    for (const reply of replies) {
      const { entries, deleted } = parseStream(reply);
      out.push(...entries);
      // Deleted while pending: nothing left to write.
      await Promise.all([...deleted].map(([stream, ids]) => this.redis.xack(stream, GROUP, ...ids)));
    }
    return out;
  }

  /** Per shard: acknowledge and delete the entries, and apply each one's correction (ack.lua). */
  async ack(items: AckItem[]): Promise<void> {
    const byShard = new Map<string, AckItem[]>();
    for (const it of items) {
      const stream = it.entry.stream ?? this.layout.outboxOf(it.entry.record.userId);
      let list = byShard.get(stream);
      if (!list) byShard.set(stream, (list = []));
      list.push(it);
    }
    await Promise.all([...byShard].map(([stream, list]) => this.ackShard(stream, list)));
  }

  private async ackShard(stream: string, all: AckItem[]): Promise<void> {
    // A call's arguments are spread on the stack (ioredis's cluster client spreads them again):
    // 9,000 entries' 63,000 arguments overflowed it there. Each part is one atomic step of its own,
    // and a correction is applied once per entry whichever part carries it (ack.lua).
    for (let i = 0; i < all.length; i += ACK_PART) await this.ackPart(stream, all.slice(i, i + ACK_PART));
  }

  private async ackPart(stream: string, items: AckItem[]): Promise<void> {
    const keysOf =
      stream === this.layout.legacyOutbox
        ? (u: string) => this.layout.legacyUserKeys(u)
        : (u: string) => this.layout.userKeys(u);
    const accounts: string[] = [];
    const index = new Map<string, number>();
    const args: string[] = [String(items.length)];
    for (const it of items) {
      const k = keysOf(it.entry.record.userId);
      let i = index.get(k.acct);
      if (i === undefined) {
        accounts.push(k.acct, k.fixed, k.late);
        i = accounts.length / 3;
        index.set(k.acct, i);
      }
      const kind = it.kind === 'inserted' ? 'I' : it.kind === 'redelivered' ? 'R' : it.kind === 'duplicate' ? 'D' : 'X';
      args.push(
        it.entry.id,
        String(i),
        it.entry.record.costNano.toString(),
        it.entry.generation,
        it.entry.spendField,
        kind,
        it.chargedAfter.toString(),
      );
    }
    await this.redis.arAck(String(1 + accounts.length), stream, ...accounts, ...args);
  }

  /** Says this writer is alive (entries of a writer without a heartbeat are claimed by others). */
  async heartbeat(consumer: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.layout.writer(consumer), '1', 'PX', ttlMs);
  }

  private async alive(name: string): Promise<boolean> {
    return (await this.redis.exists(this.layout.writer(name))) === 1;
  }

  /** Takes over the pending entries of writers without a heartbeat, shard by shard. */
  async claimAbandoned(consumer: string): Promise<number> {
    await this.ensureGroups(this.streams);
    let claimed = 0;
    const verdicts = new Map<string, boolean>();
    for (const stream of this.streams) {
      const consumers = (await this.redis.xinfo('CONSUMERS', stream, GROUP)) as unknown[][];
      for (const c of consumers) {
        const info = fieldsOf(c);
        const name = String(info.name);
        if (name === consumer) continue;
        let live = verdicts.get(name);
        if (live === undefined) verdicts.set(name, (live = await this.alive(name)));
        if (live) continue;
        if (Number(info.pending) > 0) {
          const pending = (await this.redis.xpending(stream, GROUP, '-', '+', 10_000, name)) as [
            string,
            string,
            number,
            number,
          ][];
          const ids = pending.map((p) => p[0]);
          for (let i = 0; i < ids.length; i += 500) {
            const got = (await this.redis.xclaim(
              stream,
              GROUP,
              consumer,
              0,
              ...ids.slice(i, i + 500),
              'JUSTID',
            )) as string[];
            claimed += got.length;
          }
        }
        await this.redis.xgroup('DELCONSUMER', stream, GROUP, name);
      }
    }
    return claimed;
  }

  /** Entries appended to every shard and not yet acknowledged. */
  async length(): Promise<number> {
    const lengths = await Promise.all(this.streams.map((s) => this.redis.xlen(s)));
    return lengths.reduce((a, b) => a + b, 0);
  }

  /** Every loaded account with its outbox sums: each shard's accounts read with its stream, atomically. */
  async snapshot(): Promise<HotAccountSnapshot[]> {
    const byShard = new Map<number, string[]>();
    for (const node of masters(this.redis)) {
      for (const u of await scanAccounts(node, this.layout)) {
        const s = shardOf(u);
        let list = byShard.get(s);
        if (!list) byShard.set(s, (list = []));
        list.push(u);
      }
    }
    const rows = await Promise.all(
      [...byShard].map(([shard, users]) => {
        const keys: string[] = [this.layout.outboxes[shard]!];
        for (const u of users) {
          const k = this.layout.userKeys(u);
          keys.push(k.acct, k.res, k.resv);
        }
        return this.redis.arSnapshot(String(keys.length), ...keys, ...users);
      }),
    );
    return rows
      .flat()
      .filter((r) => r[1] !== '')
      .map((r) => ({
        userId: r[0]!,
        balance: BigInt(r[1]!),
        reserved: BigInt(r[2]!),
        holds: BigInt(r[3]!),
        pendingAccounted: BigInt(r[4]!),
        pendingAccountedIds: r[7] ? r[7].split(',') : [],
        pendingUnaccounted: BigInt(r[5]!),
      }));
  }
}

/** The users with a loaded account on one server. */
async function scanAccounts(node: Redis, layout: RedisLayout): Promise<string[]> {
  const users: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', layout.accountPattern(), 'COUNT', 1000);
    cursor = next;
    for (const k of keys) {
      const u = layout.userOfAccount(k);
      if (u !== undefined) users.push(u);
    }
  } while (cursor !== '0');
  return users;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** XINFO answers are flat [name, value, name, value…] lists. */
function fieldsOf(list: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i + 1 < list.length; i += 2) out[String(list[i])] = list[i + 1];
  return out;
}

type StreamReply = [string, [string, string[] | null][]][] | null;

/** XREADGROUP's answer as entries, and the ids of those deleted while pending, per stream. */
export function parseStream(res: unknown): { entries: OutboxEntry[]; deleted: Map<string, string[]> } {
  const out: OutboxEntry[] = [];
  const deleted = new Map<string, string[]>();
  for (const [stream, entries] of (res as StreamReply) ?? []) {
    for (const [id, fields] of entries) {
      if (!fields) {
        let list = deleted.get(stream);
        if (!list) deleted.set(stream, (list = []));
        list.push(id);
        continue;
      }
      const f: Record<string, string> = {};
      for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
      out.push({ id, stream, record: decodeRecord(f.r!), generation: f.g ?? '', spendField: f.kf ?? '' });
    }
  }
  return { entries: out, deleted };
}
