// The bench's ledger baseline stands for the gateway's hot-store work per request: if it skipped
// any of it (no hold, no charge, an outbox nobody reads), the bench would credit the gateway's
// own code with a cost that is the store's.

import t from 'tap';
import { BenchLedger, LEDGER_COST, LEDGER_USER } from '../../bench/upstream/ledger.js';
import { RedisHotStore } from '../../src/store/hot-redis.js';
import { REDIS_URL, testRedisPrefix } from '../helpers/stores.js';

for (const kind of ['memory', 'redis'] as const) {
  t.test(`${kind}: a hold per request, one charge with its record, and the outbox drained`, async (t) => {
    const ledger = await BenchLedger.open(kind === 'memory' ? 'memory' : REDIS_URL, testRedisPrefix(t), true, false);
    t.teardown(() => ledger.close());
    const { store } = ledger;
    const start = (await store.balance(LEDGER_USER))!.balance;

    const used = await ledger.reserve();
    const unused = await ledger.reserve();
    t.equal(used.lease, undefined, 'holds of their own');
    t.equal((await store.balance(LEDGER_USER))!.reserved, 10_000n, 'both holds are in place before forwarding');

    await ledger.settle(used, true, performance.now());
    await ledger.settle(unused, false, performance.now());
    t.same(await store.balance(LEDGER_USER), { balance: start - LEDGER_COST, reserved: 0n }, 'one charge, one release');

    const deadline = Date.now() + 5000;
    while ((await store.outboxLength()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    t.equal(await store.outboxLength(), 0, 'the usage record was read and acknowledged, as the writer would');
    if (store instanceof RedisHotStore) {
      // The watch, once a second, lets go of what the writer acknowledged.
      while (store.retainedCount > 0 && Date.now() < deadline + 3000) await new Promise((r) => setTimeout(r, 50));
      t.equal(store.retainedCount, 0, 'the process keeps no settle the writer has acknowledged');
    }
  });
}

t.test('redis: holds drawn from a lease, as the gateway draws them', async (t) => {
  const prefix = testRedisPrefix(t);
  const ledger = await BenchLedger.open(REDIS_URL, prefix, true);
  const { store } = ledger;
  const start = (await store.balance(LEDGER_USER))!.balance;
  const used = await ledger.reserve();
  const unused = await ledger.reserve();
  t.ok(used.lease && used.lease === unused.lease, 'both from one lease');
  t.equal(
    (await store.balance(LEDGER_USER))!.reserved,
    160_000n,
    'the lease holds 32 worst cases, taken before forwarding',
  );
  await ledger.settle(used, true, performance.now());
  await ledger.settle(unused, false, performance.now());
  t.same(
    await store.balance(LEDGER_USER),
    { balance: start - LEDGER_COST, reserved: 160_000n - LEDGER_COST },
    'the charge left the lease; the release stayed in process',
  );
  t.equal(used.lease!.drawn, 0n, 'nothing drawn any more');
  await ledger.close();
  const check = new RedisHotStore(REDIS_URL, prefix);
  t.teardown(() => check.close());
  t.same(
    await check.balance(LEDGER_USER),
    { balance: start - LEDGER_COST, reserved: 0n },
    'closing hands the lease back',
  );
});
