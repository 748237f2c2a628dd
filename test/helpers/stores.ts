// Real Postgres and Redis for tests: every test file gets its own database (created and
// dropped here) and its own Redis key prefix, so parallel runs never collide.

import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { Test } from 'tap';
import { openStores, type Stores } from '../../src/store/index.js';

export const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

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

export const testRedisPrefix = () => `${uniqueName('t')}:`;

/** Both real stores, migrated, closed at teardown. */
export async function testStores(t: Test): Promise<Stores & { databaseUrl: string; redisPrefix: string }> {
  const databaseUrl = await testDatabase(t);
  const redisPrefix = testRedisPrefix();
  const stores = await openStores({ DATABASE_URL: databaseUrl, REDIS_URL, REDIS_PREFIX: redisPrefix, dataDir: '/nonexistent' });
  t.teardown(() => stores.close());
  return { ...stores, databaseUrl, redisPrefix };
}
