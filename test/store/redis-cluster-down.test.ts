// A Redis Cluster that cannot be reached: start-up stops with one line naming it instead of
// waiting for it for ever.

import t from 'tap';
import { openStores } from '../../src/store/index.js';
import { clusterAvailable } from '../helpers/redis-cluster.js';
import { testDatabase } from '../helpers/stores.js';

const skip = clusterAvailable() ? false : 'no redis-server or redis-cli here';

t.test('a cluster nobody answers for stops start-up with one line', { skip }, async (t) => {
  const started = Date.now();
  await t.rejects(
    openStores({
      DATABASE_URL: await testDatabase(t),
      redis: ['127.0.0.1:1', '127.0.0.1:2'],
      REDIS_TIMEOUT_MS: 200,
      dataDir: '/nonexistent',
    }),
    /^cannot use the Redis Cluster at 127\.0\.0\.1:1,127\.0\.0\.1:2: /,
  );
  t.ok(Date.now() - started < 20_000, `within start-up's patience (${Date.now() - started} ms)`);
});
