// Redis's own CPU per request, for the hot store's scripts alone: every request costs one
// reserve, one settle with its usage record, and its share of a writer's read and
// acknowledgement. Redis shares the cores with the gateway, so its time per request is part
// of what a request costs. Read from Redis's INFO (used_cpu_user + used_cpu_sys), so it counts
// nothing but the server.
//
//   REDIS_URL=redis://127.0.0.1:6379 node --import tsx bench/hot-store.ts [requests] [concurrency]

import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { OutboxRecord } from '../src/store/hot.js';
import { RedisHotStore } from '../src/store/hot-redis.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const requests = Number(process.argv[2] ?? 40_000);
const concurrency = Number(process.argv[3] ?? 64);

const admin = new Redis(url);
async function redisCpuSeconds(): Promise<number> {
  const info = await admin.info('cpu');
  const field = (name: string) => Number(new RegExp(`^used_cpu_${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return field('user') + field('sys');
}

const prefix = `arhotbench:${randomUUID().slice(0, 8)}:`;
const store = new RedisHotStore(url, prefix);
const userId = randomUUID();
await store.primeBalance(userId, { balance: 10n ** 15n, charged: 0n, keySpend: {} });

const record = (settleId: string): OutboxRecord => ({
  settleId, userId, keyId: 'k1', requestId: `req_${settleId.slice(0, 12)}`, model: 'bench-model', surface: 'chat', stream: false,
  status: 200, promptTokens: 12, completionTokens: 30, cachedTokens: 0, cacheWriteTokens: 0, costNano: 1234n, officialCostNano: 1500n,
  latencyMs: 3, ttftMs: null, overrun: false, createdAt: new Date(),
});

let started = 0;
let acknowledged = 0;
async function client() {
  while (started < requests) {
    started++;
    const id = randomUUID();
    const r = await store.reserve({ userId, reservationId: id, amount: 5000n, ttlMs: 60_000, keyId: 'k1', rpmLimit: 0, outboxMax: 100_000 });
    if (r.status !== 'ok') throw new Error(`reserve: ${r.status}`);
    await store.settle({ userId, reservationId: id, cost: 1234n, keyId: 'k1', record: record(id) });
  }
}
async function writer() {
  while (acknowledged < requests) {
    const entries = await store.readOutbox('bench-writer', 1000, 50);
    if (entries.length > 0) await store.ackOutbox(entries.map((entry) => ({ entry, kind: 'inserted' as const, chargedAfter: 0n })));
    acknowledged += entries.length;
  }
}

const cpuBefore = await redisCpuSeconds();
const clientBefore = process.cpuUsage();
const t0 = performance.now();
await Promise.all([...Array.from({ length: concurrency }, client), writer()]);
const wall = (performance.now() - t0) / 1000;
const clientCpu = process.cpuUsage(clientBefore);
const cpu = (await redisCpuSeconds()) - cpuBefore;
console.log(`${requests} requests (reserve, settle, read, acknowledge), ${concurrency} at a time, in ${wall.toFixed(2)} s`);
console.log(`Redis CPU: ${cpu.toFixed(2)} s, ${((cpu / requests) * 1e6).toFixed(1)} µs per request`);
// The gateway's side of the same calls (building and writing the script calls, reading the
// answers), with the outbox writer's reads and acknowledgements, all in this one process.
console.log(`client CPU: ${((clientCpu.user + clientCpu.system) / 1e6).toFixed(2)} s, ${((clientCpu.user + clientCpu.system) / requests).toFixed(1)} µs per request`);

const keys = await admin.keys(`${prefix}*`);
if (keys.length > 0) await admin.del(...keys);
await store.close();
admin.disconnect();
