// Redis's own CPU per request, for the hot store's scripts alone: every request costs one
// reserve, one settle with its usage record, and its share of a writer's read and
// acknowledgement. Redis shares the cores with the gateway, so its time per request is part
// of what a request costs. Read from Redis's INFO (used_cpu_user + used_cpu_sys, summed over a
// cluster's masters), so it counts nothing but the servers. With --cluster it runs the same on a
// Redis Cluster of three masters it starts (test/helpers/redis-cluster.ts) right after, and
// prints the cluster's figures as ratios of the single server's.
//
//   REDIS_URL=redis://127.0.0.1:6379 npm run bench:hot-store -- [requests] [concurrency] [--users N] [--cluster]

import { randomUUID } from 'node:crypto';
import type { OutboxRecord } from '../src/store/hot.js';
import { RedisHotStore } from '../src/store/hot-redis.js';
import { masters, type RedisTarget } from '../src/store/redis-connect.js';
import { dropPrefixOn, startRedisCluster } from '../test/helpers/redis-cluster.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const positional = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--users'));
const requests = Number(positional[0] ?? 40_000);
const concurrency = Number(positional[1] ?? 64);
// Users spread over the outbox shards, as a gateway's traffic is.
const userCount = option('--users', 64);

interface Figures {
  where: string;
  rps: number;
  redisUs: number;
  clientUs: number;
}

async function run(where: string, target: RedisTarget): Promise<Figures> {
  const prefix = `arhotbench:${randomUUID().slice(0, 8)}:`;
  const store = new RedisHotStore(target, prefix);
  const client = (store as unknown as { redis: Parameters<typeof masters>[0] }).redis;
  const users = Array.from({ length: userCount }, () => randomUUID());
  await Promise.all(
    users.map((u) =>
      store.primeBalance(u, { balance: 10n ** 15n, charged: 0n, keySpend: {}, creditSeq: 0n, limitsSeq: 0n }),
    ),
  );
  const redisCpuSeconds = async () => {
    let sum = 0;
    for (const node of masters(client)) {
      const info = await node.info('cpu');
      const field = (name: string) => Number(new RegExp(`^used_cpu_${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
      sum += field('user') + field('sys');
    }
    return sum;
  };
  const record = (userId: string, settleId: string): OutboxRecord => ({
    settleId,
    userId,
    keyId: 'k1',
    requestId: `req_${settleId.slice(0, 12)}`,
    model: 'bench-model',
    surface: 'chat',
    stream: false,
    status: 200,
    promptTokens: 12,
    completionTokens: 30,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    costNano: 1234n,
    officialCostNano: 1500n,
    latencyMs: 3,
    ttftMs: null,
    overrun: false,
    createdAt: new Date(),
  });
  let started = 0;
  let acknowledged = 0;
  const loop = async () => {
    while (started < requests) {
      const userId = users[started++ % users.length]!;
      const id = randomUUID();
      const r = await store.reserve({
        userId,
        reservationId: id,
        amount: 5000n,
        ttlMs: 60_000,
        keyId: 'k1',
        rpmLimit: 0,
        outboxMax: 100_000,
      });
      if (r.status !== 'ok') throw new Error(`reserve: ${r.status}`);
      await store.settle({ userId, reservationId: id, cost: 1234n, keyId: 'k1', record: record(userId, id) });
    }
  };
  const writer = async () => {
    while (acknowledged < requests) {
      const entries = await store.readOutbox('bench-writer', 1000, 50);
      if (entries.length > 0)
        await store.ackOutbox(entries.map((entry) => ({ entry, kind: 'inserted' as const, chargedAfter: 0n })));
      acknowledged += entries.length;
    }
  };
  const cpuBefore = await redisCpuSeconds();
  const clientBefore = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all([...Array.from({ length: concurrency }, loop), writer()]);
  const wall = (performance.now() - t0) / 1000;
  const clientCpu = process.cpuUsage(clientBefore);
  const cpu = (await redisCpuSeconds()) - cpuBefore;
  await dropPrefixOn(masters(client), prefix);
  await store.close();
  const f = {
    where,
    rps: Math.round(requests / wall),
    redisUs: (cpu / requests) * 1e6,
    clientUs: (clientCpu.user + clientCpu.system) / requests,
  };
  console.log(
    `${where}: ${requests} requests of ${userCount} users (reserve, settle, read, acknowledge), ${concurrency} at a time, in ${wall.toFixed(2)} s = ${f.rps} req/s`,
  );
  console.log(`  Redis CPU ${f.redisUs.toFixed(1)} µs per request; client CPU ${f.clientUs.toFixed(1)} µs per request`);
  return f;
}

const single = await run('one Redis', process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
if (flag('--cluster')) {
  const cluster = await startRedisCluster({ masters: 3 });
  try {
    const c = await run('Redis Cluster, 3 masters', cluster.seeds.split(','));
    const r = (a: number, b: number) => (a / b).toFixed(2);
    console.log(
      `cluster ÷ one Redis: throughput ${r(c.rps, single.rps)}, Redis CPU per request ${r(c.redisUs, single.redisUs)}, client CPU per request ${r(c.clientUs, single.clientUs)}`,
    );
  } finally {
    await cluster.stop();
  }
}
