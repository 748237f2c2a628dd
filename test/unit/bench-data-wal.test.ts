// bench:data's Postgres readings: the WAL clock moves when something is written, and the
// write path's settings are read as the server reports them (bench/lib/data-keys.ts).
import t from 'tap';
import postgres from 'postgres';
import { walClock, writePathSettings } from '../../bench/lib/data-keys.js';
import { testDatabase } from '../helpers/stores.js';

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
