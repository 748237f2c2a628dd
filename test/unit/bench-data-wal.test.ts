// bench:data's readings of the stores: the WAL clock moves when something is written, the
// write path's settings are read as the server reports them, and the Redis clock counts
// commands and script calls (bench/lib/data-keys.ts).
import t from 'tap';
import postgres from 'postgres';
import { Redis } from 'ioredis';
import { redisClock, walClock, writePathSettings } from '../../bench/lib/data-keys.js';
import { REDIS_URL, testDatabase } from '../helpers/stores.js';

t.test('the WAL clock counts what a write adds, and the settings name their values', async (t) => {
  const url = await testDatabase(t);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end({ timeout: 5 }));
  const clock = await walClock(sql);
  if (!clock) return t.fail('PostgreSQL 14 or later keeps pg_stat_wal');
  const before = await clock();
  await sql`CREATE TABLE wal_probe (n int)`;
  await sql`INSERT INTO wal_probe SELECT generate_series(1, 10000)`;
  const after = await clock();
  t.ok(after.bytes - before.bytes > 100_000, `10,000 rows write their WAL (${after.bytes - before.bytes} bytes)`);
  t.ok(after.checkpoints >= before.checkpoints, 'checkpoints only count up');
  const settings = await writePathSettings(sql);
  t.same(Object.keys(settings).sort(), ['checkpoint_timeout', 'max_wal_size', 'shared_buffers', 'wal_compression']);
  t.match(settings.shared_buffers, /^\d+(kB|MB|GB)$/);
});

t.test("the Redis clock counts a server's commands, scripts' own among them, and its script calls", async (t) => {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  t.teardown(() => redis.disconnect());
  const clock = redisClock(() => redis.info('commandstats'));
  const key = `bench-data-wal:${process.pid}`;
  const before = await clock();
  await redis.set(key, '1');
  await redis.eval("redis.call('INCR', KEYS[1]); return redis.call('GET', KEYS[1])", 1, key);
  await redis.del(key);
  const after = await clock();
  // Other tests share the server: at least ours, and INFO itself never.
  t.ok(after.commands - before.commands >= 4, `SET, INCR, GET, DEL (${after.commands - before.commands})`);
  t.ok(after.scriptCalls - before.scriptCalls >= 1, 'one script call');
});
