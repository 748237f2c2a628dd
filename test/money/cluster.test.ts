// Two gateways on one Redis Cluster (three masters, a replica each) and one Postgres, many users
// with small balances, and a master killed under the load: its replica takes over, whatever the
// lost master had not passed on is found missing and charged again (src/store/redis-watch.ts),
// and afterwards every answer has its record, no balance is below zero, nothing was served past
// a balance, and reconcile is exact. The larger drill, with gateway hosts in their own network
// namespaces behind a load balancer, is `npm run drill:cluster` (bench/drill-cluster.ts).

import t from 'tap';
import { createKey } from '../../src/accounts/keys.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { RedisLayout, slotOf } from '../../src/store/redis-layout.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway } from '../helpers/gateway.js';
import { clusterAvailable, startRedisCluster } from '../helpers/redis-cluster.js';
import { testDatabase, testRedisPrefix } from '../helpers/stores.js';

t.test(
  'two gateways on a Redis Cluster keep the books exact through a master failover',
  { skip: clusterAvailable() ? false : 'no redis-server or redis-cli here' },
  async (t) => {
    const cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
    t.teardown(() => cluster.stop());
    const fake = await startFakeUpstream();
    t.teardown(() => fake.close());
    const env = {
      DATABASE_URL: await testDatabase(t),
      REDIS_CLUSTER_NODES: cluster.seeds,
      REDIS_PREFIX: testRedisPrefix(),
      REDIS_TIMEOUT_MS: '1000',
    };
    const a = await startTestGateway(t, { upstream: fake.url, env });
    const b = await startTestGateway(t, { upstream: fake.url, env });
    const sql = a.stores.sql;
    const users = await Promise.all(Array.from({ length: 12 }, () => a.user('0.003')));

    // Closed loops, a user each on alternate gateways, until every balance is spent.
    const outcomes: Record<string, number> = {};
    let stop = false;
    const loops = users.flatMap((u, i) =>
      [0, 1].map(async (j) => {
        const gw = (i + j) % 2 === 0 ? a : b;
        while (!stop) {
          const res = await fetch(`${gw.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              model: 'oa-model',
              max_tokens: 20,
              messages: [{ role: 'user', content: 'Say hello.' }],
            }),
          }).catch(() => null);
          const status = res ? String(res.status) : 'network';
          await res?.arrayBuffer();
          outcomes[status] = (outcomes[status] ?? 0) + 1;
          if (status === '402') return;
          if (status !== '200') await sleep(50);
        }
      }),
    );
    await sleep(1500);
    // The master of the first user's shard: its accounts and records are the ones at risk.
    const layout = new RedisLayout(env.REDIS_PREFIX);
    const victim = await ownerOfSlot(
      cluster.nodes.filter((n) => n.role === 'master').map((n) => n.port),
      slotOf(layout.userBase(users[0]!.userId)),
    );
    await cluster.kill(victim);
    const killedAt = Date.now();
    await cluster.waitHealthy(20_000);
    t.comment(`failed over in ${Date.now() - killedAt} ms`);
    await Promise.race([Promise.all(loops), sleep(4_000)]);
    stop = true;
    await Promise.all(loops);
    t.comment(JSON.stringify(outcomes));
    t.ok((outcomes['200'] ?? 0) > 50, 'requests were served');
    t.ok(
      Object.keys(outcomes).every((s) => ['200', '402', '503', '429'].includes(s)),
      `only answers, refusals and brief unavailability (${Object.keys(outcomes)})`,
    );

    // Both watches have had a round since the failover; then the writers drain the outbox.
    await sleep(2500);
    await a.services.outbox.drained(20_000);
    const [row] = await sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM usage_records WHERE status = 200 AND user_id = ANY(${users.map((u) => u.userId)}::uuid[])`;
    t.equal(
      row!.n,
      outcomes['200'],
      `every answer has its record, once (${row!.n} records for ${outcomes['200']} answers)`,
    );
    const balances = await sql<
      { balance_nano: bigint }[]
    >`SELECT balance_nano FROM users WHERE id = ANY(${users.map((u) => u.userId)}::uuid[])`;
    t.ok(
      balances.every((r) => r.balance_nano >= 0n),
      `no balance below zero (${balances.map((r) => r.balance_nano).join(', ')})`,
    );
    const [spent] = await sql<
      { most: bigint }[]
    >`SELECT coalesce(max(s), 0)::bigint AS most FROM (SELECT sum(cost_nano) AS s FROM usage_records WHERE user_id = ANY(${users.map((u) => u.userId)}::uuid[]) GROUP BY user_id) x`;
    t.ok(spent!.most <= 3_000_000n, `no user charged past their credit (at most ${spent!.most} of 3000000 nano)`);
    const report = await reconcile(sql, a.stores.hot);
    t.same(report.mismatches, [], 'Postgres reconciles');
    t.same(report.hotMismatches, [], 'the cluster agrees');
  },
);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Which of the masters serves a slot, asked of the cluster itself. */
async function ownerOfSlot(ports: number[], slot: number): Promise<number> {
  const { Redis } = await import('ioredis');
  const r = new Redis(ports[0]!, '127.0.0.1');
  try {
    const ranges = await r.cluster('SLOTS');
    const range = ranges.find(([start, end]) => start <= slot && slot <= end);
    if (!range?.[2]) throw new Error(`no master serves slot ${slot}`);
    return range[2][1];
  } finally {
    r.disconnect();
  }
}

t.test(
  'across gateways on a Redis Cluster a key keeps its requests a minute and its spend cap',
  { skip: clusterAvailable() ? false : 'no redis-server or redis-cli here' },
  async (t) => {
    const cluster = await startRedisCluster({ masters: 3 });
    t.teardown(() => cluster.stop());
    const fake = await startFakeUpstream();
    t.teardown(() => fake.close());
    const env = {
      DATABASE_URL: await testDatabase(t),
      REDIS_CLUSTER_NODES: cluster.seeds,
      REDIS_PREFIX: testRedisPrefix(),
    };
    const gateways = [
      await startTestGateway(t, { upstream: fake.url, env }),
      await startTestGateway(t, { upstream: fake.url, env }),
    ];
    const sql = gateways[0]!.stores.sql;
    const u = await gateways[0]!.user('10');
    const ask = (key: string, i: number) =>
      fetch(`${gateways[i % 2]!.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'oa-model',
          max_tokens: 20,
          messages: [{ role: 'user', content: 'Say hello.' }],
        }),
      }).then(async (r) => (await r.arrayBuffer(), r.status));

    const limited = await createKey(sql, u.userId, 'rpm', { rpm: 7 });
    const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => ask(limited.key, i)));
    t.equal(statuses.filter((s) => s === 200).length, 7, 'seven requests a minute, whichever gateway takes them');
    t.ok(
      statuses.every((s) => s === 200 || s === 429),
      'the rest are 429s',
    );

    // One after the other, alternating gateways, until the cap refuses: both count the same spend.
    // (A request costs about 13,000 nano here and holds more: about 160,000.)
    const capped = await createKey(sql, u.userId, 'cap', { spend: { nano: 500_000n, period: 'total' } });
    let served = 0;
    let refused = 0;
    for (let i = 0; i < 200 && refused === 0; i++) {
      const s = await ask(capped.key, i);
      if (s === 200) served++;
      else refused = s;
    }
    t.equal(refused, 429, `refused once the cap is near, after ${served} served`);
    await gateways[0]!.services.outbox.drained(10_000);
    const [spent] = await sql<
      { s: bigint }[]
    >`SELECT coalesce(sum(cost_nano), 0)::bigint AS s FROM usage_records WHERE key_id = ${capped.id}`;
    t.ok(
      spent!.s <= 500_000n && spent!.s > 200_000n,
      `the key spent up to its cap across both gateways, not past it (${spent!.s} of 500000)`,
    );
    const report = await reconcile(sql, gateways[0]!.stores.hot);
    t.equal(report.ok, true, 'reconcile exact');
  },
);
