// Start-up against a Redis that is slow to answer (a machine busy restarting after a crash):
// the gateway waits for it within START_PATIENCE_MS, where one command's REDIS_TIMEOUT_MS would
// have stopped it; a refused connection still fails at once.

import t from 'tap';
import { createServer, type AddressInfo } from 'node:net';
import { openStores, START_PATIENCE_MS } from '../../src/store/index.js';
import { testDatabase, testRedisPrefix, REDIS_URL } from '../helpers/stores.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

const redis = new URL(REDIS_URL);

t.test("a Redis silent for longer than one command's timeout is waited for", async (t) => {
  const databaseUrl = await testDatabase(t);
  const proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
  t.teardown(() => proxy.close());
  proxy.cut('blackhole');
  const started = Date.now();
  const opening = openStores({
    DATABASE_URL: databaseUrl,
    REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
    REDIS_PREFIX: testRedisPrefix(t),
    REDIS_TIMEOUT_MS: 200,
    dataDir: '/nonexistent',
  });
  // Several of its timeouts pass before Redis answers.
  setTimeout(() => proxy.restore(), 1500);
  const stores = await opening;
  t.teardown(() => stores.close());
  t.ok(Date.now() - started >= 1400, 'it waited for the link to come back');
  await stores.hot.ping();
  t.pass('and uses it');
});

t.test('a refused connection fails at once, a silent one after the patience', async (t) => {
  const databaseUrl = await testDatabase(t);
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const closed = (holder.address() as AddressInfo).port;
  await new Promise<void>((resolve) => holder.close(() => resolve()));
  let started = Date.now();
  await t.rejects(
    openStores({
      DATABASE_URL: databaseUrl,
      REDIS_URL: `redis://127.0.0.1:${closed}`,
      REDIS_TIMEOUT_MS: 200,
      dataDir: '/nonexistent',
    }),
    /cannot use Redis at 127\.0\.0\.1:\d+: connect ECONNREFUSED/,
  );
  t.ok(Date.now() - started < 2000, `refused: failed in ${Date.now() - started} ms`);

  const proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
  t.teardown(() => proxy.close());
  proxy.cut('blackhole');
  started = Date.now();
  await t.rejects(
    openStores({
      DATABASE_URL: databaseUrl,
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      REDIS_TIMEOUT_MS: 200,
      dataDir: '/nonexistent',
    }),
    /cannot use Redis at 127\.0\.0\.1:\d+: .*(timed out|ETIMEDOUT)/,
  );
  const took = Date.now() - started;
  t.ok(took >= START_PATIENCE_MS && took < START_PATIENCE_MS + 3000, `silent: failed after ${took} ms`);
});
