// The usage writer's statements are planned for the table as it is, not as it was. A statement
// prepared on an empty usage_records and run with a generic plan scanned the whole table on
// every batch once it grew (with autovacuum off, nothing ever replanned it): Postgres time per
// batch grew with every record ever written.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { createKey } from '../../src/accounts/keys.js';
import { createVerifiedUser } from '../../src/accounts/users.js';
import { commitEntries } from '../../src/billing/outbox-writer.js';
import type { OutboxEntry } from '../../src/store/hot.js';
import { openSql, type Sql } from '../../src/store/sql.js';
import { testStores } from '../helpers/stores.js';
import { usageRecord } from '../helpers/usage-record.js';

const entry = (userId: string, n: number): OutboxEntry => ({
  id: `${Date.now()}-${n}`,
  generation: 'g',
  spendField: '',
  record: usageRecord(userId, randomUUID(), 1n, { requestId: `req_${n}`, latencyMs: 1 }),
});

/** Rows of usage_records read by sequential scans, as the writer's own backend counts them. */
async function seqRead(sql: Sql): Promise<number> {
  // A backend's counts reach the shared statistics when it next goes idle; this asks it to.
  await sql`SELECT pg_stat_force_next_flush()`;
  const [row] = await sql<
    { n: number }[]
  >`SELECT seq_tup_read::int AS n FROM pg_stat_user_tables WHERE relname = 'usage_records'`;
  return row!.n;
}

t.test('a batch looks its records up by index however the table grew since the writer started', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'plans@example.test');
  // One connection, so every batch runs on the backend that prepared the statements.
  const writer = await openSql({ databaseUrl: s.databaseUrl, dataDir: '/nonexistent', max: 1 });
  t.teardown(() => writer.close());
  let n = 0;
  // Past Postgres's five custom plans, while the table is nearly empty: batches of 20 and of
  // 100 made the generic plan a sequential scan (batches of 400 did not).
  for (let i = 0; i < 8; i++)
    await commitEntries(
      writer.sql,
      Array.from({ length: 20 }, () => entry(user.id, n++)),
    );
  const grown = 40_000;
  await s.sql`
    INSERT INTO usage_records (user_id, request_id, model, surface, stream, status, settle_id)
    SELECT ${user.id}::uuid, 'bulk_' || g, 'm', 'chat', false, 200, gen_random_uuid() FROM generate_series(1, ${grown}) g`;
  const before = await seqRead(writer.sql);
  const items = await commitEntries(
    writer.sql,
    Array.from({ length: 50 }, () => entry(user.id, n++)),
  );
  t.equal(items.filter((i) => i.kind === 'inserted').length, 50, 'the batch is written');
  const scanned = (await seqRead(writer.sql)) - before;
  t.ok(
    scanned < grown / 10,
    `rows read by sequential scans for one batch: ${scanned} (the table holds ${grown + 160})`,
  );
});

t.test(
  "the per-key daily totals are written through their primary key alone; a user's deletion still takes them",
  async (t) => {
    const s = await testStores(t);
    const user = await createVerifiedUser(s.sql, 'key-daily@example.test');
    const indexes = await s.sql<{ indexname: string }[]>`
    SELECT indexname FROM pg_indexes WHERE tablename = 'usage_key_daily' ORDER BY indexname`;
    // Each index here is one more page written at a random place for a key's first record of a
    // day (sql/037): nothing the product reads needs another.
    t.same(
      indexes.map((i) => i.indexname),
      ['usage_key_daily_pkey'],
      'the primary key only',
    );
    const { id: keyId } = await createKey(s.sql, user.id);
    await commitEntries(s.sql, [{ ...entry(user.id, 1), record: usageRecord(user.id, randomUUID(), 5n, { keyId }) }]);
    const count = async () =>
      (await s.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM usage_key_daily WHERE user_id = ${user.id}`)[0]!.n;
    t.equal(await count(), 1, "the record's key and day are totalled");
    await s.sql`DELETE FROM users WHERE id = ${user.id}`;
    t.equal(await count(), 0, 'deleting the user by hand removes them (the foreign key still cascades)');
  },
);
