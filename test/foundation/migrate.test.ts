// Migrations: each file applied once and recorded; a second run is a no-op; processes that
// migrate at the same time queue on the advisory lock, so the schema is applied exactly once.

import t from 'tap';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { listMigrations, migrate, SQL_DIR } from '../../src/store/migrate.js';
import { openSql } from '../../src/store/sql.js';
import { childEnv, runCli } from '../helpers/child.js';
import { REDIS_URL, testDatabase } from '../helpers/stores.js';

const files = listMigrations();

async function open(t: Parameters<typeof testDatabase>[0], url?: string) {
  const store = await openSql({
    databaseUrl: url ?? (await testDatabase(t, { migrated: false })),
    dataDir: '/nonexistent',
  });
  t.teardown(() => store.close());
  return store.sql;
}

t.test('the sql/ directory holds numbered migrations', async (t) => {
  t.ok(files.length >= 1);
  t.same(
    files.map((f) => f.version),
    [...new Set(files.map((f) => f.version))].sort((a, b) => a - b),
    'versions are unique and ordered',
  );
});

t.test('applying twice is a no-op', async (t) => {
  const sql = await open(t);
  t.same(
    await migrate(sql),
    files.map((f) => f.name),
    'the first run applies every file',
  );
  t.same(await migrate(sql), [], 'the second run applies nothing');
  const rows = await sql<
    { version: number; name: string }[]
  >`SELECT version, name FROM schema_migrations ORDER BY version`;
  t.same(
    rows.map((r) => ({ version: r.version, name: r.name })),
    files.map((f) => ({ version: f.version, name: f.name })),
    'one row per file',
  );
  const [{ n }] = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name IN ('users', 'api_keys', 'deposits', 'usage_records', 'sessions', 'email_tokens')`;
  t.equal(n, 6, 'the schema is there');
});

t.test('a new file is applied alone; a failing one leaves nothing behind', async (t) => {
  const sql = await open(t);
  const dir = mkdtempSync(path.join(tmpdir(), 'airouter-migrations-'));
  for (const f of files) copyFileSync(path.join(SQL_DIR, f.name), path.join(dir, f.name));
  await migrate(sql, dir);

  writeFileSync(path.join(dir, '900_extra.sql'), 'CREATE TABLE extra_one (id int);');
  t.same(await migrate(sql, dir), ['900_extra.sql'], 'only the new file');
  t.same(await migrate(sql, dir), []);

  writeFileSync(path.join(dir, '901_broken.sql'), 'CREATE TABLE extra_two (id int); SELECT * FROM no_such_table;');
  await t.rejects(migrate(sql, dir), /no_such_table/);
  const [{ n }] = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'extra_two'`;
  t.equal(n, 0, "the failed file's statements were rolled back");
  const [{ v }] = await sql<{ v: number }[]>`SELECT max(version) AS v FROM schema_migrations`;
  t.equal(v, 900, 'and it is not recorded');
});

t.test('concurrent migrations in one process apply the schema once', async (t) => {
  const url = await testDatabase(t, { migrated: false });
  const clients = await Promise.all([1, 2, 3, 4].map(() => open(t, url)));
  const results = await Promise.all(clients.map((sql) => migrate(sql)));
  t.same(results.flat().sort(), files.map((f) => f.name).sort(), 'every file applied by exactly one of them');
  t.equal(results.filter((r) => r.length > 0).length, 1, 'one run did the work, the others found it done');
});

t.test('two `airouter migrate` processes at once: both exit 0, the schema is applied once', async (t) => {
  const url = await testDatabase(t, { migrated: false });
  const env = childEnv({ DATABASE_URL: url, REDIS_URL });
  const [a, b] = await Promise.all([runCli(['migrate'], env), runCli(['migrate'], env)]);
  for (const r of [a, b]) {
    t.equal(r.code, 0, `exit 0 (stderr: ${r.stderr})`);
    t.equal(r.stderr, '');
    t.match(r.stdout, /migrations applied/);
  }
  const sql = await open(t, url);
  const rows = await sql<
    { version: number; n: number }[]
  >`SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version ORDER BY version`;
  t.same(
    rows.map((r) => r.version),
    files.map((f) => f.version),
    'every version recorded',
  );
  t.ok(
    rows.every((r) => r.n === 1),
    'each once',
  );
  t.same(await migrate(sql), [], 'nothing left to apply');
});
