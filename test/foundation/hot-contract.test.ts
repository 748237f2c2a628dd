// The hot-store contract (src/store/hot.ts), run against both implementations: Redis (real
// server, own key prefix) and the in-process twin. Whatever one does, the other must do too.

import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { HotStore } from '../../src/store/hot.js';
import { MemoryHotStore } from '../../src/store/hot-memory.js';
import { RedisHotStore } from '../../src/store/hot-redis.js';
import { waitFor } from '../helpers/child.js';
import { REDIS_URL, testRedisPrefix } from '../helpers/stores.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Deletes every key under `prefix` (the test's own namespace). */
async function dropPrefix(prefix: string) {
  const r = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await r.del(...keys);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}

interface Impl {
  name: string;
  /** A fresh store; `peer` opens a second one on the same data (another process, for Redis). */
  open(t: Test): { store: HotStore; peer: () => HotStore };
}

const IMPLS: Impl[] = [
  {
    name: 'RedisHotStore',
    open(t) {
      const prefix = testRedisPrefix();
      const opened: HotStore[] = [];
      const make = () => {
        const s = new RedisHotStore(REDIS_URL, prefix);
        opened.push(s);
        return s;
      };
      t.teardown(async () => {
        await Promise.all(opened.map((s) => s.close()));
        await dropPrefix(prefix);
      });
      return { store: make(), peer: make };
    },
  },
  {
    name: 'MemoryHotStore',
    open(t) {
      const store = new MemoryHotStore();
      t.teardown(() => store.close());
      return { store, peer: () => store };
    },
  },
];

const user = () => randomUUID();

for (const impl of IMPLS) {
  t.test(impl.name, async (t) => {
    t.test('200 concurrent reservations against a balance covering exactly 20', async (t) => {
      const { store } = impl.open(t);
      const u = user();
      await store.primeBalance(u, 20_000n);
      const started = performance.now();
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => store.reserve(u, `r${i}`, 1_000n, 60_000)));
      const ms = performance.now() - started;
      t.equal(results.filter((r) => r.status === 'ok').length, 20, 'exactly 20 granted');
      t.equal(results.filter((r) => r.status === 'insufficient').length, 180, 'the rest refused');
      t.ok(results.every((r) => r.available >= 0n), 'available never below 0 in any answer');
      const okAvail = results.filter((r) => r.status === 'ok').map((r) => r.available).sort((a, b) => (a < b ? -1 : 1));
      t.same(okAvail, Array.from({ length: 20 }, (_, i) => BigInt(i * 1000)), 'each grant saw the balance the previous ones left');
      t.same(await store.balance(u), { balance: 20_000n, reserved: 20_000n }, 'balance untouched, all of it reserved');
      t.comment(`${impl.name}: 200 concurrent reserve() calls in ${ms.toFixed(1)} ms (${Math.round(200 / (ms / 1000))}/s)`);
    });

    t.test('reserve: unknown balance, exact fit, one nano too many', async (t) => {
      const { store } = impl.open(t);
      const u = user();
      t.same(await store.reserve(u, 'a', 1n, 60_000), { status: 'unknown', available: 0n }, 'not loaded: unknown');
      await store.primeBalance(u, 1_000n);
      t.same(await store.reserve(u, 'b', 1_001n, 60_000), { status: 'insufficient', available: 1_000n });
      t.same(await store.reserve(u, 'c', 1_000n, 60_000), { status: 'ok', available: 0n });
      t.same(await store.reserve(u, 'd', 1n, 60_000), { status: 'insufficient', available: 0n });
      t.same(await store.reserve(u, 'e', 0n, 60_000), { status: 'ok', available: 0n }, 'a zero hold always fits');
    });

    t.test('settle charges the exact cost and releases the rest', async (t) => {
      const { store } = impl.open(t);
      const u = user();
      await store.primeBalance(u, 20_000n);
      t.equal((await store.reserve(u, 'a', 5_000n, 60_000)).status, 'ok');
      t.equal((await store.reserve(u, 'b', 3_000n, 60_000)).status, 'ok');
      t.same(await store.balance(u), { balance: 20_000n, reserved: 8_000n });
      t.same(await store.settle(u, 'a', 1_234n), { known: true, charged: 1_234n });
      t.same(await store.balance(u), { balance: 18_766n, reserved: 3_000n }, 'charged 1234, released the other 3766');
      t.same(await store.settle(u, 'b', 0n), { known: true, charged: 0n });
      t.same(await store.balance(u), { balance: 18_766n, reserved: 0n });
    });

    t.test('settle is idempotent per reservation id', async (t) => {
      const { store } = impl.open(t);
      const u = user();
      await store.primeBalance(u, 10_000n);
      await store.reserve(u, 'once', 4_000n, 60_000);
      t.same(await store.settle(u, 'once', 2_500n), { known: true, charged: 2_500n });
      t.same(await store.settle(u, 'once', 2_500n), { known: true, charged: 0n }, 'the repeat charges nothing');
      t.same(await store.settle(u, 'once', 9_000n), { known: true, charged: 0n }, 'whatever cost it names');
      t.same(await store.balance(u), { balance: 7_500n, reserved: 0n });
      // A settle that follows an expiry (the request outlived its hold) still charges, once.
      await store.reserve(u, 'late', 1_000n, 30);
      await sleep(80);
      t.same(await store.balance(u), { balance: 7_500n, reserved: 0n }, 'expired hold released');
      t.same(await store.settle(u, 'late', 700n), { known: true, charged: 700n }, 'late settle charges the usage');
      t.same(await store.settle(u, 'late', 700n), { known: true, charged: 0n }, 'once');
      t.same(await store.balance(u), { balance: 6_800n, reserved: 0n }, 'nothing released twice');
    });

    t.test('settle of a cost above the balance is capped, never negative', async (t) => {
      const { store } = impl.open(t);
      const u = user();
      await store.primeBalance(u, 1_000n);
      await store.reserve(u, 'a', 1_000n, 60_000);
      t.same(await store.settle(u, 'a', 5_000n), { known: true, charged: 1_000n });
      t.same(await store.balance(u), { balance: 0n, reserved: 0n });
      t.same(await store.settle(u, 'never-reserved', 10n), { known: true, charged: 0n }, 'nothing left to take');
      t.same(await store.balance(u), { balance: 0n, reserved: 0n });
      t.same(await store.settle(user(), 'x', 10n), { known: false, charged: 0n }, 'unknown balance: nothing taken');
    });

    t.test('an expired reservation is released', async (t) => {
      const { store } = impl.open(t);
      const u = user();
      await store.primeBalance(u, 1_000n);
      const at = Date.now();
      t.equal((await store.reserve(u, 'short', 1_000n, 50)).status, 'ok');
      const blocked = await store.reserve(u, 'blocked', 1n, 60_000);
      // On a loaded machine the second call may come after the 50 ms: only then may it pass.
      if (Date.now() - at < 45) t.equal(blocked.status, 'insufficient', 'held while alive');
      else t.comment('second call came too late to see the hold alive');
      if (blocked.status === 'ok') await store.settle(u, 'blocked', 0n);
      await sleep(120);
      t.same(await store.balance(u), { balance: 1_000n, reserved: 0n }, 'balance() releases it');
      t.equal((await store.reserve(u, 'again', 1_000n, 60_000)).status, 'ok', 'and the whole balance is available again');
    });

    t.test('credit only affects a loaded balance; primeBalance is SET NX; forget', async (t) => {
      const { store } = impl.open(t);
      const u = user();
      await store.credit(u, 500n);
      t.equal(await store.balance(u), null, 'credit to an unloaded balance does not create one');
      await store.primeBalance(u, 100n);
      await store.primeBalance(u, 999n);
      t.same(await store.balance(u), { balance: 100n, reserved: 0n }, 'the second prime is ignored');
      await store.credit(u, 50n);
      t.same(await store.balance(u), { balance: 150n, reserved: 0n });
      await store.forgetBalance(u);
      t.equal(await store.balance(u), null);
      t.equal((await store.reserve(u, 'a', 1n, 1000)).status, 'unknown');
    });

    t.test('amounts beyond 32 bits stay exact', async (t) => {
      const { store } = impl.open(t);
      const u = user();
      const big = 123_456_789_012_345n; // $123,456.789012345
      await store.primeBalance(u, big);
      t.same(await store.reserve(u, 'a', big - 1n, 60_000), { status: 'ok', available: 1n });
      t.same(await store.settle(u, 'a', 1_000_000_000n), { known: true, charged: 1_000_000_000n });
      t.same(await store.balance(u), { balance: big - 1_000_000_000n, reserved: 0n });
    });

    t.test('hit() counts within a window', async (t) => {
      const { store } = impl.open(t);
      const a = `login:${user()}`;
      const b = `login:${user()}`;
      t.same(await store.hit(a, 1), { count: 1, ttlS: 1 });
      t.same(await store.hit(a, 1), { count: 2, ttlS: 1 });
      t.equal((await store.hit(b, 60)).count, 1, 'buckets are independent');
      const third = await store.hit(b, 60);
      t.equal(third.count, 2);
      t.ok(third.ttlS > 55 && third.ttlS <= 60, `seconds left in the window (${third.ttlS})`);
      await sleep(1_100);
      t.equal((await store.hit(a, 1)).count, 1, 'a new window starts over');
      await store.resetHits(b);
      t.equal((await store.hit(b, 60)).count, 1, 'reset starts over');
    });

    t.test('publish reaches subscribers', async (t) => {
      const { store, peer } = impl.open(t);
      const other = peer();
      const got: string[] = [];
      let arrivedAll = () => {};
      const arrived = new Promise<void>((resolve) => (arrivedAll = resolve));
      // Resolves once the subscription is in place.
      await other.subscribe('news', (m) => {
        got.push(m);
        if (got.length === 2) arrivedAll();
      });
      await store.publish('news', 'one');
      await store.publish('elsewhere', 'not for us');
      await store.publish('news', 'two');
      await Promise.race([arrived, sleep(2000)]);
      t.same(got, ['one', 'two'], 'in order, only its channel');
    });

    t.test('getCached/setCached with a TTL, deleteCached', async (t) => {
      const { store, peer } = impl.open(t);
      await store.setCached('k1', 'v1', 500);
      await store.setCached('k2', 'v2', 60_000);
      t.equal(await store.getCached('k1'), 'v1');
      t.equal(await peer().getCached('k2'), 'v2', 'shared with every process');
      t.equal(await store.getCached('nope'), null);
      await sleep(700);
      t.equal(await store.getCached('k1'), null, 'gone after its TTL');
      await store.deleteCached('k2');
      t.equal(await store.getCached('k2'), null);
      await store.setCached('k3', 'first', 60_000, { onlyIfAbsent: true });
      await store.setCached('k3', 'second', 60_000, { onlyIfAbsent: true });
      t.equal(await store.getCached('k3'), 'first', 'set-if-absent keeps a live value');
      await store.setCached('k3', 'third', 60_000);
      t.equal(await store.getCached('k3'), 'third', 'a plain set overwrites');
      await store.ping();
    });
  });
}

t.test('Redis: prefixes keep gateways apart', async (t) => {
  const p1 = testRedisPrefix();
  const p2 = testRedisPrefix();
  const a = new RedisHotStore(REDIS_URL, p1);
  const b = new RedisHotStore(REDIS_URL, p2);
  t.teardown(async () => {
    await a.close();
    await b.close();
    await dropPrefix(p1);
    await dropPrefix(p2);
  });
  const u = user();
  await a.primeBalance(u, 10n);
  t.equal(await b.balance(u), null);
  const got: string[] = [];
  await b.subscribe('ch', (m) => got.push(m));
  await a.publish('ch', 'x');
  await b.publish('ch', 'mine');
  await waitFor(() => got.length > 0, 2000);
  await sleep(50);
  t.same(got, ['mine'], 'another prefix hears nothing, its own prefix does');
});

t.test('Redis: reservation throughput (one connection, pipelined)', async (t) => {
  const prefix = testRedisPrefix();
  const store = new RedisHotStore(REDIS_URL, prefix);
  t.teardown(async () => {
    await store.close();
    await dropPrefix(prefix);
  });
  const users = Array.from({ length: 100 }, user);
  await Promise.all(users.map((u) => store.primeBalance(u, 1_000_000_000n)));
  const n = 20_000;
  const started = performance.now();
  let done = 0;
  // 200 in flight at a time, as a busy gateway would have.
  await Promise.all(
    Array.from({ length: 200 }, async (_, w) => {
      for (let i = w; i < n; i += 200) {
        const u = users[i % users.length];
        const r = await store.reserve(u, `r${i}`, 1_000n, 60_000);
        if (r.status === 'ok') done++;
      }
    }),
  );
  const s = (performance.now() - started) / 1000;
  t.equal(done, n);
  t.comment(`Redis reserve(): ${n} calls, 200 in flight, in ${s.toFixed(2)} s = ${Math.round(n / s)}/s`);
});
