// The usage log filtered by one error status reads the user's own error rows, in order, through
// an index of them (sql/040): never the gateway-wide index of that status, whose rows of every
// user the first five runs of the statement (custom plans, the status a literal) walked for the
// heaviest user of bench:data's year: 92,000 pages and 0.6-1.5 s, where the estimate of a status
// that is both "= 502" and "> 299" came out fifty times too small.
import t from 'tap';
import { readLog } from '../../src/dashboard/usage.js';
import { openSql, type Sql } from '../../src/store/sql.js';
import { fill } from '../../bench/lib/data-fill.js';
import { indexScans } from '../helpers/plans.js';
import { testStores } from '../helpers/stores.js';

const scans = (sql: Sql) => indexScans(sql, 'usage_records');

t.test("one error status of the heaviest user's log: its own error rows, not every user's", async (t) => {
  const s = await testStores(t);
  // bench:data's fill at a small size: the same shares of statuses and users, so that the
  // planner weighs the indexes as it does on the year.
  const fx = await fill(s.sql, { users: 400, keysPerUser: 2, records: 300_000, days: 60, seed: 'plans' }, () => {});
  await s.sql`ANALYZE usage_records`;
  await s.sql`ANALYZE refused_requests`;
  // One connection: five custom plans, then the generic one, all counted.
  const reader = await openSql({ databaseUrl: s.databaseUrl, dataDir: '/nonexistent', max: 1 });
  t.teardown(() => reader.close());
  const before = await scans(reader.sql);
  for (let i = 0; i < 8; i++) {
    const rows = await readLog(
      reader.sql,
      fx.heavyUserId,
      { model: undefined, keyId: undefined, status: 502 },
      undefined,
      51,
    );
    t.ok(rows.length > 0 && rows.every((r) => r.status === 502), `run ${i + 1}: the user's 502s`);
  }
  const after = await scans(reader.sql);
  const used = (name: string) => (after[name] ?? 0) - (before[name] ?? 0);
  // Each run reads that index in every month (sql/041: no bound on the time, no month pruned).
  const [{ months }] = await s.sql<{ months: number }[]>`
    SELECT count(*)::int AS months FROM pg_inherits WHERE inhparent = 'usage_records'::regclass`;
  t.ok(months >= 3, `the fill's 60 days in months of their own (${months} partitions)`);
  t.equal(used('usage_user_error_status_time'), 8 * months, "each run reads the user's errors of that status");
  t.equal(used('usage_error_status_time'), 0, "no run reads every user's rows of that status");
});
