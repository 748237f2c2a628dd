import type { Config } from '../config.js';
import type { HotStore } from './hot.js';
import { MemoryHotStore } from './hot-memory.js';
import { RedisHotStore } from './hot-redis.js';
import { migrate } from './migrate.js';
import { openSql, type SqlStore } from './sql.js';

export interface Stores {
  sql: SqlStore['sql'];
  hot: HotStore;
  embeddedSql: boolean;
  close(): Promise<void>;
}

export function openHot(redisUrl: string | undefined, prefix?: string): HotStore {
  return redisUrl ? new RedisHotStore(redisUrl, prefix) : new MemoryHotStore();
}

/** Opens both stores and brings the schema up to date. */
export async function openStores(config: Pick<Config, 'DATABASE_URL' | 'REDIS_URL' | 'dataDir'> & { REDIS_PREFIX?: string }): Promise<Stores> {
  const sqlStore = await openSql({ databaseUrl: config.DATABASE_URL, dataDir: config.dataDir });
  try {
    await migrate(sqlStore.sql);
  } catch (err) {
    await sqlStore.close().catch(() => {});
    throw err;
  }
  const hot = openHot(config.REDIS_URL, config.REDIS_PREFIX);
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
