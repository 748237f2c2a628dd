import type { HotStore } from './hot.js';
import { MemoryHotStore } from './hot-memory.js';
import { RedisHotStore } from './hot-redis.js';
import { describeTarget, type RedisTarget } from './redis-connect.js';
import { migrate } from './migrate.js';
import { openSql, StoreError, type SqlStore } from './sql.js';

export interface Stores {
  sql: SqlStore['sql'];
  hot: HotStore;
  embeddedSql: boolean;
  close(): Promise<void>;
}

export function openHot(redis: RedisTarget | undefined, prefix?: string, timeoutMs?: number): HotStore {
  return redis ? new RedisHotStore(redis, prefix, { timeoutMs }) : new MemoryHotStore();
}

/** Host, port and path of a store URL: never its password. */
const where = (url: string) => {
  const u = new URL(url);
  return `${u.host}${u.pathname === '/' ? '' : u.pathname}`;
};

/** A store that cannot be used at start, as the one line the CLI prints. */
const unusable = (what: string, err: unknown) =>
  err instanceof StoreError ? err : new StoreError(`cannot use ${what}: ${(err as Error)?.message ?? String(err)}`);

/**
 * How long start-up waits for a Redis that does not answer in time. A gateway restarted after a
 * crash starts on a machine busy with everything else restarting, where one command can take
 * longer than REDIS_TIMEOUT_MS (tuned for requests, which should fail fast); Postgres is given
 * its connect timeout of 5 s the same way. A refused connection is an answer and fails at once.
 */
export const START_PATIENCE_MS = 10_000;

const timedOut = (err: unknown) => /timed out|ETIMEDOUT/i.test((err as Error)?.message ?? '');

async function firstPing(hot: HotStore): Promise<void> {
  const until = Date.now() + START_PATIENCE_MS;
  for (;;) {
    try {
      return await hot.ping();
    } catch (err) {
      if (!timedOut(err) || Date.now() >= until) throw err;
    }
  }
}

/** Opens both stores and brings the schema up to date. */
export async function openStores(
  // The settings it reads, by their names in src/config.ts (which sits above the stores).
  config: {
    DATABASE_URL?: string;
    REDIS_URL?: string;
    dataDir: string;
    redis?: RedisTarget;
    REDIS_PREFIX?: string;
    REDIS_TIMEOUT_MS?: number;
    DATABASE_POOL_SIZE?: number;
  },
): Promise<Stores> {
  const sqlStore = await openSql({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.dataDir,
    max: config.DATABASE_POOL_SIZE,
  });
  try {
    await migrate(sqlStore.sql);
  } catch (err) {
    await sqlStore.close().catch(() => {});
    throw unusable(
      config.DATABASE_URL ? `Postgres at ${where(config.DATABASE_URL)}` : `the embedded Postgres in ${config.dataDir}`,
      err,
    );
  }
  const redis = config.redis ?? config.REDIS_URL;
  const hot = openHot(redis, config.REDIS_PREFIX, config.REDIS_TIMEOUT_MS);
  try {
    // Checked now, so that an unreachable Redis stops start-up with one clear line instead of
    // failing every request (and every CLI command hanging on its retries).
    await firstPing(hot);
  } catch (err) {
    await hot.close().catch(() => {});
    await sqlStore.close().catch(() => {});
    throw unusable(describeTarget(redis ?? ''), err);
  }
  return {
    sql: sqlStore.sql,
    hot,
    embeddedSql: sqlStore.embedded,
    async close() {
      await hot.close();
      await sqlStore.close();
    },
  };
}
