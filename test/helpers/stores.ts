// Real Postgres and Redis for tests: every test file gets its own database (created and
// dropped here) and its own Redis key prefix, so parallel runs never collide.

import { createHash, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import type { Test } from 'tap';
import { setPasswordHashCost } from '../../src/accounts/passwords.js';
import { openStores, type Stores } from '../../src/store/index.js';
import { listMigrations, migrate } from '../../src/store/migrate.js';
import { openSql } from '../../src/store/sql.js';

export const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * scrypt's cost (log2 N) for the passwords tests set: 1 ms a hash where the default, 15, takes
 * 0.1-0.8 s, and the suite sets some hundreds. Gateways and commands started by the tests get it
 * as PASSWORD_HASH_COST; this process's own helpers (gw.user()) use it from here.
 * test/dashboard/passwords.test.ts holds the default to its cost.
 */
export const TEST_PASSWORD_HASH_COST = 10;
setPasswordHashCost(TEST_PASSWORD_HASH_COST);

export const uniqueName = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;

const databaseUrl = (name: string) => {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

/**
 * A fresh database for this test, dropped at teardown: a copy of the migrated template (the
 * schema as every gateway makes it on a new database), or with `migrated: false` an empty one.
 */
export async function testDatabase(t: Test, opts: { migrated?: boolean } = {}): Promise<string> {
  const name = uniqueName('airouter_test');
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const template = opts.migrated === false ? undefined : await migratedTemplate(admin);
  await admin.unsafe(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  t.teardown(async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });
  return databaseUrl(name);
}

const TEMPLATE_PREFIX = 'airouter_template_';
const TEMPLATE_LOCK = 0x6169_7274; // "airt"

/**
 * The database the test databases are copied from, migrated once for every test file (a copy
 * takes about a third of the time of migrating, on this suite's hundred-odd databases). Its
 * name carries a digest of sql/, so a changed migration makes a new one; the first test process
 * to need it builds it under an advisory lock while the others wait, and it stays for the next
 * run. It is built under another name and renamed when complete: a build that died half-way is
 * never copied.
 */
async function migratedTemplate(admin: postgres.Sql): Promise<string> {
  const digest = createHash('sha256');
  for (const m of listMigrations()) digest.update(`${m.name}\0${m.text}\0`);
  const name = TEMPLATE_PREFIX + digest.digest('hex').slice(0, 16);
  const exists = async () => (await admin`SELECT 1 FROM pg_database WHERE datname = ${name}`).length > 0;
  if (await exists()) return name;
  await admin`SELECT pg_advisory_lock(${TEMPLATE_LOCK})`;
  try {
    if (await exists()) return name;
    const building = uniqueName('airouter_building');
    await admin.unsafe(`CREATE DATABASE ${building}`);
    const store = await openSql({ databaseUrl: databaseUrl(building), dataDir: '/nonexistent', max: 1 });
    try {
      await migrate(store.sql);
    } finally {
      await store.close();
    }
    // Builds that died (only the lock's holder builds), and templates of older migrations made
    // over a day ago: a newer one may belong to another checkout's run going on now (its next
    // test database is copied from it), which dropping it would break.
    const stale = await admin<{ datname: string }[]>`
      SELECT datname FROM pg_database
      WHERE datname LIKE 'airouter_building%'
         OR (datname LIKE ${TEMPLATE_PREFIX + '%'} AND (pg_stat_file('base/' || oid || '/PG_VERSION')).modification < now() - interval '1 day')`.catch(
      () => [],
    );
    for (const { datname } of stale)
      if (datname !== building) await admin.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    await admin.unsafe(`ALTER DATABASE ${building} RENAME TO ${name}`);
    return name;
  } finally {
    await admin`SELECT pg_advisory_unlock(${TEMPLATE_LOCK})`;
  }
}

/**
 * A Redis key prefix of the test's own. With `t`, its keys are deleted when the test ends, after
 * the teardowns registered later (tap runs them last first): the stores or the gateway that
 * write under it are closed by then, so nothing makes a key again.
 */
export function testRedisPrefix(t?: Test): string {
  const prefix = `${uniqueName('t')}:`;
  t?.teardown(() => dropRedisPrefix(prefix));
  return prefix;
}

/** Deletes every key under `prefix`. */
export async function dropRedisPrefix(prefix: string): Promise<void> {
  const r = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await r.del(...keys);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}

/** Both real stores, migrated, closed at teardown. */
export async function testStores(t: Test): Promise<Stores & { databaseUrl: string; redisPrefix: string }> {
  const databaseUrl = await testDatabase(t);
  const redisPrefix = testRedisPrefix(t);
  const stores = await openStores({
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    dataDir: '/nonexistent',
  });
  t.teardown(() => stores.close());
  return { ...stores, databaseUrl, redisPrefix };
}
