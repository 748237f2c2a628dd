// A Redis Cluster that cannot be reached: start-up stops with one line naming it, and a store
// whose cluster went away fails each call within its timeout (a request's 503) instead of
// queueing it until the cluster is back.

import t from 'tap';
import { randomUUID } from 'node:crypto';
import { RedisHotStore } from '../../src/store/hot-redis.js';
import { openStores } from '../../src/store/index.js';
import { clusterAvailable, startRedisCluster } from '../helpers/redis-cluster.js';
import { testDatabase } from '../helpers/stores.js';

const skip = clusterAvailable() ? false : 'no redis-server or redis-cli here';

t.test('a cluster nobody answers for stops start-up with one line', { skip }, async (t) => {
  const started = Date.now();
  await t.rejects(
    openStores({ DATABASE_URL: await testDatabase(t), redis: ['127.0.0.1:1', '127.0.0.1:2'], REDIS_TIMEOUT_MS: 200, dataDir: '/nonexistent' }),
    /^cannot use the Redis Cluster at 127\.0\.0\.1:1,127\.0\.0\.1:2: /,
  );
  t.ok(Date.now() - started < 20_000, `within start-up's patience (${Date.now() - started} ms)`);
});

t.test('calls on a cluster that went away fail within the timeout', { skip }, async (t) => {
  const cluster = await startRedisCluster({ masters: 3 });
  t.teardown(() => cluster.stop());
  const store = new RedisHotStore(cluster.seeds.split(','), `t${randomUUID().slice(0, 8)}:`, { timeoutMs: 300 });
  t.teardown(() => store.close());
  await store.ping();
  const u = randomUUID();
  await store.primeBalance(u, { balance: 1_000n, charged: 0n, keySpend: {} });
  for (const n of cluster.nodes) await cluster.kill(n.port);
  const started = Date.now();
  await t.rejects(store.reserve({ userId: u, reservationId: randomUUID(), amount: 1n, ttlMs: 60_000, keyId: 'k', rpmLimit: 0, outboxMax: 0 }));
  t.ok(Date.now() - started < 5_000, `refused in ${Date.now() - started} ms`);
});
