// The Redis Cluster harness (test/helpers/redis-cluster.ts) itself: a cluster it starts serves
// keys in every slot, and after its master of a slot is killed, a replica takes the slot over
// with the data written before, and the old master comes back as a replica.

import { Cluster } from 'ioredis';
import t from 'tap';
import { clusterAvailable, startRedisCluster } from '../helpers/redis-cluster.js';

t.test(
  'a cluster of three masters with a replica each survives the loss of a master',
  { skip: clusterAvailable() ? false : 'no redis-server or redis-cli (apt-get install redis-server)' },
  async (t) => {
    const started = Date.now();
    const cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
    t.teardown(() => cluster.stop());
    t.comment(`cluster up in ${Date.now() - started} ms`);
    t.same(
      cluster.nodes.map((n) => n.role),
      ['master', 'master', 'master', 'replica', 'replica', 'replica'],
      'masters first',
    );

    const redis = new Cluster(
      cluster.seeds.split(',').map((s) => ({ host: s.split(':')[0], port: Number(s.split(':')[1]) })),
    );
    redis.on('error', () => {});
    t.teardown(() => redis.disconnect());

    const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
    for (const k of keys) await redis.set(k, `v-${k}`);
    t.same(
      await Promise.all(keys.map((k) => redis.get(k))),
      keys.map((k) => `v-${k}`),
      'every key reads back',
    );
    const sizes = await Promise.all(redis.nodes('master').map((n) => n.dbsize()));
    t.ok(
      sizes.every((n) => n > 0),
      `the keys are spread over every master (${sizes.join(', ')})`,
    );

    // WAIT on the connection that wrote: a pipeline of one slot goes to that slot's master.
    const [, [, acked]] = (await redis.pipeline().set('{a}', 'before').wait(1, 5000).exec())!;
    t.equal(acked, 1, 'the replica has {a} before its master is killed');

    const owner = await ownerOf(redis, '{a}');
    await cluster.kill(owner);
    const killed = Date.now();
    await cluster.waitHealthy(15_000);
    t.comment(`healthy again ${Date.now() - killed} ms after the kill`);
    t.equal(await redis.get('{a}'), 'before', '{a} is read from the promoted replica');
    t.not(await ownerOf(redis, '{a}'), owner, 'another node owns its slot');

    await cluster.restart(owner);
    await cluster.waitHealthy(15_000);
    t.equal(cluster.nodes.find((n) => n.port === owner)?.role, 'replica', 'the old master rejoins as a replica');
  },
);

/** The port of the master that serves `key`'s slot. */
async function ownerOf(redis: Cluster, key: string): Promise<number> {
  const slot = (await redis.cluster('KEYSLOT', key)) as number;
  const ranges = await redis.cluster('SLOTS');
  const range = ranges.find(([start, end]) => start <= slot && slot <= end);
  if (!range) throw new Error(`no master serves slot ${slot}`);
  return range[2][1];
}
