// A Redis last used by a version before the outbox was sharded (redis-layout.ts) holds one
// `outbox` stream and users' keys tagged by their own id. Its queued usage records are charges
// already taken from balances and not yet in Postgres: they are committed before this version
// serves (an account it loads from Postgres would not carry them otherwise), and then that
// layout's keys are dropped. Every gateway of the older version must be stopped first: one
// still running would charge from its own copy of the balances.

import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { AckItem, OutboxEntry } from './hot.js';
import { masters, type RedisClient } from './redis-connect.js';
import type { RedisLayout } from './redis-layout.js';
import { GROUP, parseStream } from './redis-outbox.js';

const BATCH = 500;

/** Commits and acknowledges every record of the older outbox, drops its keys; how many it committed. */
export async function adoptLegacy(
  redis: RedisClient,
  layout: RedisLayout,
  commit: (entries: OutboxEntry[]) => Promise<AckItem[]>,
  ack: (items: AckItem[]) => Promise<void>,
): Promise<number> {
  const stream = layout.legacyOutbox;
  if ((await redis.exists(stream)) === 0) return 0;
  try {
    await redis.xgroup('CREATE', stream, GROUP, '0', 'MKSTREAM');
  } catch (err) {
    if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
  }
  const consumer = `adopt-${randomUUID()}`;
  // The older writers are gone (or must be): what they had read and not acknowledged is ours.
  const consumers = (await redis.xinfo('CONSUMERS', stream, GROUP)) as unknown[][];
  for (const c of consumers) {
    const name = String(c[1]);
    const pending = (await redis.xpending(stream, GROUP, '-', '+', 100_000, name)) as [string][];
    for (let i = 0; i < pending.length; i += BATCH) {
      await redis.xclaim(stream, GROUP, consumer, 0, ...pending.slice(i, i + BATCH).map((p) => p[0]), 'JUSTID');
    }
  }
  let committed = 0;
  for (const from of ['0', '>']) {
    for (;;) {
      const { entries, deleted } = parseStream(
        await redis.xreadgroup('GROUP', GROUP, consumer, 'COUNT', String(BATCH), 'STREAMS', stream, from),
      );
      for (const [s, ids] of deleted) await redis.xack(s, GROUP, ...ids);
      if (entries.length === 0) break;
      await ack(await commit(entries));
      committed += entries.length;
    }
  }
  if ((await redis.xlen(stream)) > 0)
    throw new Error(
      `${stream} is still being written to: a gateway of an older version is running on this Redis; stop it first`,
    );
  await redis.del(stream);
  for (const node of masters(redis)) await dropLegacyKeys(node, layout);
  return committed;
}

async function dropLegacyKeys(node: Redis, layout: RedisLayout): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', `${layout.prefix}*`, 'COUNT', 1000);
    cursor = next;
    const old = keys.filter((k) => layout.isLegacyKey(k));
    if (old.length > 0) await node.del(...old);
  } while (cursor !== '0');
}
