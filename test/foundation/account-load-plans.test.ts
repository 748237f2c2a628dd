// An account's load reads its capped keys' spend through the index of capped keys only
// (sql/036): never through every key of the user and their rows, which for an account no process
// has met were pages read from outside Postgres' buffers on the request path; and of the per-key
// daily totals it reads the months of each cap's period only (sql/043).
import t from 'tap';
import { createKey } from '../../src/accounts/keys.js';
import { createVerifiedUser } from '../../src/accounts/users.js';
import { snapshotColumns, snapshotOf, type SnapshotColumns } from '../../src/billing/account-snapshot.js';
import { Balances } from '../../src/billing/balances.js';
import { spendField } from '../../src/billing/key-limits.js';
import { openSql, type Sql } from '../../src/store/sql.js';
import { indexScans } from '../helpers/plans.js';
import { testStores } from '../helpers/stores.js';

const scans = (sql: Sql) => indexScans(sql, 'api_keys');

t.test('a cold account is loaded without visiting its uncapped keys', async (t) => {
  const s = await testStores(t);
  // One connection: the statement's generic plan (after five runs) is the one counted.
  const loader = await openSql({ databaseUrl: s.databaseUrl, dataDir: '/nonexistent', max: 1 });
  t.teardown(() => loader.close());
  const users: string[] = [];
  for (let i = 0; i < 8; i++) {
    const u = await createVerifiedUser(s.sql, `load-plan-${i}@example.test`);
    await createKey(s.sql, u.id, 'a');
    await createKey(s.sql, u.id, 'b');
    if (i % 2 === 0) await createKey(s.sql, u.id, 'capped', { spend: { nano: 5_000n, period: 'month' } });
    users.push(u.id);
  }
  // A gateway's worth of other accounts, three keys each, so that the planner weighs indexes as
  // it does on a real table (on a table of a few rows it reads them all, whatever is indexed).
  await s.sql`INSERT INTO users (email) SELECT 'other-' || n || '@example.test' FROM generate_series(1, 3000) n`;
  await s.sql`
    INSERT INTO api_keys (user_id, key_hash, prefix)
    SELECT u.id, md5(u.id::text || k), 'ar-x' FROM users u, generate_series(1, 3) k WHERE u.email LIKE 'other-%'`;
  await s.sql`ANALYZE users`;
  await s.sql`ANALYZE api_keys`;
  const balances = new Balances(loader.sql, s.hot);
  const before = await scans(loader.sql);
  // One at a time: eight runs of the statement, past the five custom plans.
  for (const u of users) t.ok(await balances.prime(u), 'loaded');
  const after = await scans(loader.sql);
  const used = (name: string) => (after[name] ?? 0) - (before[name] ?? 0);
  t.equal(used('api_keys_capped'), users.length, 'each load probes the capped keys once');
  t.equal(used('api_keys_user'), 0, 'no load walks every key of its user');
});

t.test("a capped key's spend is read from the months of its period only", async (t) => {
  const s = await testStores(t);
  const loader = await openSql({ databaseUrl: s.databaseUrl, dataDir: '/nonexistent', max: 1 });
  t.teardown(() => loader.close());
  const now = new Date();
  const daysAgo = (n: number) => new Date(now.getTime() - n * 86_400_000).toISOString().slice(0, 10);
  // Months back to 250 days ago, as a year of writers made them (sql/043).
  await s.sql`SELECT usage_months_cover(now() - interval '250 days', now())`;
  const monthly = await createVerifiedUser(s.sql, 'capped-month@example.test');
  const a = await createKey(s.sql, monthly.id, 'month', { spend: { nano: 1_000_000n, period: 'month' } });
  const lifetime = await createVerifiedUser(s.sql, 'capped-total@example.test');
  const b = await createKey(s.sql, lifetime.id, 'total', { spend: { nano: 1_000_000n, period: 'total' } });
  // 40 and more days ago is always an earlier month.
  for (const [key, user, day, cost] of [
    [a.id, monthly.id, daysAgo(0), 5],
    [a.id, monthly.id, daysAgo(40), 7],
    [a.id, monthly.id, daysAgo(100), 11],
    [b.id, lifetime.id, daysAgo(0), 2],
    [b.id, lifetime.id, daysAgo(200), 3],
  ] as const)
    await s.sql`INSERT INTO usage_key_daily (key_id, day, user_id, cost_nano) VALUES (${key}, ${day}, ${user}, ${cost})`;
  const snapshot = async (userId: string) => {
    const [row] = await loader.sql<SnapshotColumns[]>`
      SELECT ${snapshotColumns(loader.sql, now)} FROM users u WHERE u.id = ${userId}`;
    return snapshotOf(row, now).keySpend;
  };
  // Scans of each month's table, by index or not (a table of a few rows is read whole).
  const partitionScans = async () => {
    await loader.sql`SELECT pg_stat_force_next_flush()`;
    const rows = await loader.sql<{ part: string; n: number }[]>`
      SELECT relname AS part, (seq_scan + coalesce(idx_scan, 0))::int AS n FROM pg_stat_user_tables
      WHERE relname LIKE 'usage_key_daily_%'`;
    return Object.fromEntries(rows.map((r) => [r.part, r.n]));
  };
  const [{ jit }] = await loader.sql<{ jit: string }[]>`SHOW jit`;
  // A load planned high (a partition not analyzed yet) was compiled for 470 ms before it ran.
  t.equal(jit, 'off', "the gateway's connections compile no plan");
  const before = await partitionScans();
  // Past the five custom plans: the generic plan prunes too.
  const RUNS = 7;
  for (let i = 0; i < RUNS; i++)
    t.same(await snapshot(monthly.id), { [spendField(a.id, 'month', now)]: 5n }, "this month's spend only");
  const after = await partitionScans();
  const scanned = Object.keys(after).filter((p) => after[p]! > (before[p] ?? 0));
  t.same(scanned, [`usage_key_daily_${daysAgo(0).slice(0, 7).replace('-', '_')}`], 'one month read');
  t.equal(after[scanned[0]!]! - (before[scanned[0]!] ?? 0), RUNS, 'once a load');
  t.same(await snapshot(lifetime.id), { [spendField(b.id, 'total', now)]: 5n }, 'a total cap sums every month');
});
