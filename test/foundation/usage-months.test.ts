// Usage records and their daily totals by month (sql/041, sql/043) on real Postgres: each row in
// its month's partition, a month without one kept in DEFAULT and moved once made (counted once
// in the totals), a redelivered batch recognised across months, the writer making the months it
// writes, and the migration of unpartitioned tables that already hold records.

import t from 'tap';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { createVerifiedUser, creditUser } from '../../src/accounts/users.js';
import { NO_LIMITS } from '../../src/billing/key-limits.js';
import { Ledger } from '../../src/billing/ledger.js';
import { commitEntries, OutboxWriter } from '../../src/billing/outbox-writer.js';
import { nextMonthStart, UsageMonths } from '../../src/billing/usage-months.js';
import type { OutboxEntry } from '../../src/store/hot.js';
import { listMigrations, migrate, SQL_DIR } from '../../src/store/migrate.js';
import { openSql, type Sql } from '../../src/store/sql.js';
import { testDatabase, testStores } from '../helpers/stores.js';
import { usageRecord } from '../helpers/usage-record.js';

const silent = pino({ level: 'silent' });
/** The key the entries are charged to: its daily totals are partitioned too. */
const KEY = randomUUID();
const DAY = 86_400_000;
const monthOf = (ms: number) => `usage_records_${new Date(ms).toISOString().slice(0, 7).replace('-', '_')}`;

async function whereIs(sql: Sql, settleId: string): Promise<string[]> {
  const rows = await sql<{ part: string }[]>`
    SELECT tableoid::regclass::text AS part FROM usage_records WHERE settle_id = ${settleId}`;
  return rows.map((r) => r.part);
}

async function totals(sql: Sql, userId: string) {
  const [row] = await sql<{ requests: number; cost: string }[]>`
    SELECT coalesce(sum(requests), 0)::int AS requests, coalesce(sum(cost_nano), 0)::text AS cost
    FROM usage_daily WHERE user_id = ${userId}`;
  return row;
}

/** The partitions holding the user's rows of the daily totals (sql/043), per table. */
async function dailyParts(sql: Sql, userId: string) {
  const [row] = await sql<{ daily: string[]; keys: string[] }[]>`
    SELECT (SELECT array_agg(tableoid::regclass::text ORDER BY day) FROM usage_daily WHERE user_id = ${userId}) AS daily,
           (SELECT array_agg(tableoid::regclass::text ORDER BY day) FROM usage_key_daily WHERE user_id = ${userId}) AS keys`;
  return row;
}
const dailyMonth = (table: string, ms: number) =>
  `${table}_${new Date(ms).toISOString().slice(0, 7).replace('-', '_')}`;

const entry = (id: string, userId: string, cost: bigint, createdAt: Date): OutboxEntry => ({
  id,
  record: usageRecord(userId, randomUUID(), cost, { createdAt, keyId: KEY }),
  generation: '',
  spendField: '',
});

t.test('each record in its month; a month not yet made waits in DEFAULT and moves, counted once', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'months@example.test');
  await creditUser(s.sql, s.hot, user.id, 1_000_000n, { method: 'operator', amount: '1', currency: 'USD' });
  const now = Date.now();
  const months = new UsageMonths(s.sql, silent);
  await months.cover(new Date(now));

  const here = entry('1-0', user.id, 100n, new Date(now));
  // Two years ahead: no writer has made that month.
  const later = entry('2-0', user.id, 250n, new Date(now + 730 * DAY));
  t.same(
    (await commitEntries(s.sql, [here, later])).map((i) => i.kind),
    ['inserted', 'inserted'],
  );
  t.same(await whereIs(s.sql, here.record.settleId), [monthOf(now)], "this month's record in this month's partition");
  t.same(await whereIs(s.sql, later.record.settleId), ['usage_records_default'], 'a month not made: kept in DEFAULT');
  t.same(await totals(s.sql, user.id), { requests: 2, cost: '350' });
  t.same(
    await dailyParts(s.sql, user.id),
    {
      daily: [dailyMonth('usage_daily', now), 'usage_daily_default'],
      keys: [dailyMonth('usage_key_daily', now), 'usage_key_daily_default'],
    },
    "the day's totals in this month's partitions; the month not made in DEFAULT",
  );

  await months.cover(later.record.createdAt);
  t.same(
    await whereIs(s.sql, later.record.settleId),
    [monthOf(later.record.createdAt.getTime())],
    'moved once its month is made',
  );
  const [{ stray }] = await s.sql<{ stray: number }[]>`SELECT count(*)::int AS stray FROM usage_records_default`;
  t.equal(stray, 0, 'DEFAULT empty');
  t.same(await totals(s.sql, user.id), { requests: 2, cost: '350' }, 'the move is not counted again in the totals');
  const laterMs = later.record.createdAt.getTime();
  t.same(
    await dailyParts(s.sql, user.id),
    {
      daily: [dailyMonth('usage_daily', now), dailyMonth('usage_daily', laterMs)],
      keys: [dailyMonth('usage_key_daily', now), dailyMonth('usage_key_daily', laterMs)],
    },
    'the daily totals moved into their month too',
  );

  // A writer that died before acknowledging: the same two entries, two years apart, again.
  const again = await commitEntries(s.sql, [here, later]);
  t.same(
    again.map((i) => i.kind),
    ['redelivered', 'redelivered'],
    'recognised in both months',
  );
  const [{ charged, rows }] = await s.sql<{ charged: string; rows: number }[]>`
    SELECT (SELECT charged_nano::text FROM users WHERE id = ${user.id}) AS charged,
           (SELECT count(*)::int FROM usage_records) AS rows`;
  t.same({ charged, rows }, { charged: '350', rows: 2 }, 'charged once each');
});

t.test('the writer makes the months of the records it writes, and a month past them', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'writer-months@example.test');
  await creditUser(s.sql, s.hot, user.id, 1_000_000n, { method: 'operator', amount: '1', currency: 'USD' });
  const ledger = new Ledger(s.sql, s.hot, { ttlMs: 60_000, outboxMax: 0 });
  const writer = new OutboxWriter(s.sql, s.hot, silent, { batchMax: 100, pauseMs: 0 });
  const at = Date.now() + 3 * 365 * DAY;
  const res = await ledger.reserve({ userId: user.id, keyId: randomUUID(), limits: NO_LIMITS }, 1_000n);
  await ledger.settle(res, 700n, usageRecord(user.id, res.id, 700n, { createdAt: new Date(at) }));
  writer.start();
  t.teardown(() => writer.stop());
  await writer.drained();
  t.same(await whereIs(s.sql, res.id), [monthOf(at)], "in its month's partition, made by the writer");
  const ahead = monthOf(nextMonthStart(at + 31 * DAY) - 1);
  const [{ made }] = await s.sql<{ made: boolean }[]>`SELECT to_regclass(${ahead}) IS NOT NULL AS made`;
  t.ok(made, `and the month after it (${ahead})`);
  const daily = ['usage_daily', 'usage_key_daily'].map((table) => dailyMonth(table, nextMonthStart(at + 31 * DAY) - 1));
  const [{ both }] = await s.sql<{ both: boolean }[]>`
    SELECT bool_and(to_regclass(p) IS NOT NULL) AS both FROM unnest(${daily}::text[]) p`;
  t.ok(both, `and the daily totals' months (${daily.join(', ')})`);
});

t.test('a month that cannot be made in time is tried again a minute later, and never throws', async (t) => {
  const s = await testStores(t);
  const at = new Date(Date.now() + 5 * 365 * DAY);
  const part = monthOf(at.getTime());
  const holder = await s.sql.reserve();
  t.teardown(() => holder.release());
  await holder`BEGIN`;
  await holder`LOCK TABLE usage_records IN SHARE ROW EXCLUSIVE MODE`;
  const months = new UsageMonths(s.sql, silent);
  const started = Date.now();
  await months.cover(at, started);
  t.ok(Date.now() - started < 10_000, 'gave up within its lock timeout');
  await holder`ROLLBACK`;
  const exists = async () =>
    (await s.sql<{ made: boolean }[]>`SELECT to_regclass(${part}) IS NOT NULL AS made`)[0]!.made;
  t.notOk(await exists(), 'not made while the lock was held');
  await months.cover(at, started + 30_000);
  t.notOk(await exists(), 'not tried again within the minute');
  await months.cover(at, started + 61_000);
  t.ok(await exists(), 'made on the next try');
});

t.test('the migration moves the records of an unpartitioned table into their months', async (t) => {
  const url = await testDatabase(t, { migrated: false });
  const store = await openSql({ databaseUrl: url, dataDir: '/nonexistent' });
  t.teardown(() => store.close());
  const sql = store.sql;
  // The schema as it was before sql/041.
  const before = mkdtempSync(path.join(tmpdir(), 'airouter-before-041-'));
  for (const m of listMigrations().filter((m) => m.version < 41))
    copyFileSync(path.join(SQL_DIR, m.name), path.join(before, m.name));
  await migrate(sql, before);
  const user = await createVerifiedUser(sql, 'old-records@example.test');
  await sql`
    INSERT INTO usage_records (user_id, request_id, model, surface, stream, status, cost_nano, created_at, settle_id)
    SELECT ${user.id}, 'req_' || i, 'm', 'chat', false, 200, i, now() - interval '1 day' * i * 7, gen_random_uuid()
    FROM generate_series(1, 20) i`;
  await sql`INSERT INTO refused_requests (user_id, request_id, surface, status, error_code, created_at)
            VALUES (${user.id}, 'req_r', 'chat', 402, 'insufficient_balance', now())`;
  const snapshot = () =>
    sql<{ id: string; settle_id: string; cost_nano: string; created_at: Date }[]>`
      SELECT id::text, settle_id, cost_nano::text, created_at FROM usage_records ORDER BY id`;
  const old = await snapshot();
  const oldTotals = await totals(sql, user.id);
  const [{ top }] = await sql<{ top: string }[]>`SELECT max(id)::text AS top FROM refused_requests`;

  t.same(
    await migrate(sql),
    listMigrations()
      .filter((m) => m.version >= 41)
      .map((m) => m.name),
    'sql/041 and what follows it',
  );
  t.same(await snapshot(), old, 'every record kept, with its id');
  t.same(await totals(sql, user.id), oldTotals, 'the totals not counted again');
  const parts = await sql<{ part: string; n: number }[]>`
    SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM usage_records GROUP BY 1`;
  t.ok(parts.length >= 5, `20 weeks in ${parts.length} months`);
  t.ok(
    parts.every((p) => /^usage_records_\d{4}_\d{2}$/.test(p.part)),
    'none in DEFAULT',
  );
  const days = await sql<{ part: string }[]>`SELECT DISTINCT tableoid::regclass::text AS part FROM usage_daily`;
  t.ok(days.length >= 5, `the daily totals in ${days.length} months (sql/043)`);
  t.ok(
    days.every((p) => /^usage_daily_\d{4}_\d{2}$/.test(p.part)),
    'none of them in DEFAULT',
  );
  // Both tables go on taking ids from the one sequence, past every id already given.
  const [{ next }] = await sql<{ next: string }[]>`
    INSERT INTO refused_requests (user_id, request_id, surface, status, error_code, created_at)
    VALUES (${user.id}, 'req_r2', 'chat', 402, 'insufficient_balance', now()) RETURNING id::text AS next`;
  t.ok(BigInt(next) > BigInt(top), `a refusal's next id (${next}) past the last (${top})`);
  const [{ id }] = await sql<{ id: string }[]>`
    INSERT INTO usage_records (user_id, request_id, model, surface, stream, status) VALUES (${user.id}, 'req_n', 'm', 'chat', false, 200)
    RETURNING id::text`;
  t.ok(BigInt(id) > BigInt(next), 'and a record after it');
  t.same(
    await totals(sql, user.id),
    { requests: oldTotals.requests + 1, cost: oldTotals.cost },
    'the trigger counts new records',
  );
});
