// The Redis store's hot path: a turn's reserve and settle calls reach Redis in one socket write.
// Each write is a syscall in the worker and a read in Redis; at saturation the two batches of a
// turn were two of each.

import t from 'tap';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { RedisHotStore } from '../../src/store/hot-redis.js';
import { REDIS_URL, testRedisPrefix } from '../helpers/stores.js';

t.test('one turn of reserves and settles is one write to Redis', async (t) => {
  const store = new RedisHotStore(REDIS_URL, testRedisPrefix(t));
  t.teardown(() => store.close());
  const userId = randomUUID();
  await store.primeBalance(userId, { balance: 1_000_000n, charged: 0n, keySpend: {}, creditSeq: 0n, limitsSeq: 0n });
  const reserve = (id: string) =>
    store.reserve({ userId, reservationId: id, amount: 10n, ttlMs: 60_000, keyId: 'k1', rpmLimit: 0, outboxMax: 0 });
  const settle = (id: string) =>
    store.settle({
      userId,
      reservationId: id,
      cost: 1n,
      keyId: 'k1',
      record: {
        settleId: id,
        userId,
        keyId: null,
        requestId: `req_${id}`,
        model: 'm',
        surface: 'chat',
        stream: false,
        status: 200,
        promptTokens: 1,
        completionTokens: 1,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        costNano: 1n,
        officialCostNano: 1n,
        latencyMs: 1,
        ttftMs: null,
        overrun: false,
        createdAt: new Date(),
      },
    });
  // Both scripts loaded (the first call of each is EVALSHA, then EVAL).
  await reserve('r0');
  await settle('r0');
  await reserve('r1');

  const socket = (store as unknown as { redis: { stream: Socket } }).redis.stream;
  let writes = 0;
  for (const m of ['_write', '_writev'] as const) {
    const original = socket[m] as (...args: unknown[]) => void;
    socket[m] = function (this: Socket, ...args: unknown[]) {
      writes++;
      return original.apply(this, args);
    } as never;
  }
  for (let i = 1; i <= 20; i++) {
    const [held, settled] = await Promise.all([reserve(`r${i + 1}`), settle(`r${i}`)]);
    t.equal(held.status, 'ok');
    t.equal(settled.duplicate, false);
  }
  t.equal(writes, 20, 'one write per turn, not one per batch');
});
