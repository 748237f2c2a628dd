// Real Postgres and Redis for tests: every test file gets its own database (created and
// dropped here) and its own Redis key prefix, so parallel runs never collide.

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import type { Test } from 'tap';
import { setPasswordHashCost } from '../../src/accounts/passwords.js';
import { openStores, type Stores } from '../../src/store/index.js';

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

/** A fresh database for this test; dropped at teardown. */
export async function testDatabase(t: Test): Promise<string> {
  const name = uniqueName('airouter_test');
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  t.teardown(async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
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
  const stores = await openStores({ DATABASE_URL: databaseUrl, REDIS_URL, REDIS_PREFIX: redisPrefix, dataDir: '/nonexistent' });
  t.teardown(() => stores.close());
  return { ...stores, databaseUrl, redisPrefix };
}
