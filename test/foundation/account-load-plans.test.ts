// An account's load reads its capped keys' spend through the index of capped keys only
// (sql/036): never through every key of the user and their rows, which for an account no process
// has met were pages read from outside Postgres' buffers on the request path.
import t from 'tap';
import { createKey } from '../../src/accounts/keys.js';
import { createVerifiedUser } from '../../src/accounts/users.js';
import { Balances } from '../../src/billing/balances.js';
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
