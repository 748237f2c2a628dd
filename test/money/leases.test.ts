// Leases (src/billing/leases.ts) over real Postgres and Redis: requests draw their worst case
// from a standing hold of their process, and the money stays exact: never more served than the
// balance covers, in one process or several, a cost taken out of the hold as it is charged,
// leases renewed, handed back when idle, and expiring when their process is gone.

import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { createVerifiedUser, creditUser } from '../../src/accounts/users.js';
import { NO_LIMITS, type KeyLimits } from '../../src/billing/key-limits.js';
import { Ledger, type Payer } from '../../src/billing/ledger.js';
import type { Reservation } from '../../src/billing/reservation.js';
import type { LeaseObserver } from '../../src/billing/leases.js';
import { OutboxWriter } from '../../src/billing/outbox-writer.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { GatewayError } from '../../src/errors.js';
import { RedisHotStore } from '../../src/store/hot-redis.js';
import { RedisLayout } from '../../src/store/redis-layout.js';
import { REDIS_URL, testStores } from '../helpers/stores.js';
import type { Clock } from '../../src/clock.js';
import { ManualClock } from '../helpers/clock.js';
import { usageRecord as record } from '../helpers/usage-record.js';

type Stores = Awaited<ReturnType<typeof testStores>>;
const silent = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const payer = (userId: string, limits: KeyLimits = NO_LIMITS): Payer => ({ userId, keyId: randomUUID(), limits });

const leasing = (
  s: Stores,
  opts: { ttlMs?: number; windowMs?: number; requests?: number; clock?: Clock; observer?: LeaseObserver } = {},
) => {
  const ledger = new Ledger(s.sql, s.hot, {
    ttlMs: opts.ttlMs ?? 60_000,
    outboxMax: 0,
    leases: {
      windowMs: opts.windowMs ?? 60_000,
      requests: opts.requests ?? 32,
      clock: opts.clock,
      observer: opts.observer,
    },
  });
  return ledger;
};

async function funded(s: Stores, nano: bigint): Promise<string> {
  const user = await createVerifiedUser(s.sql, `${randomUUID()}@example.test`);
  await creditUser(s.sql, s.hot, user.id, nano, { method: 'operator', amount: String(nano), currency: 'USD' });
  return user.id;
}

const settle = (ledger: Ledger, res: Reservation, cost: bigint) =>
  ledger.settle(res, cost, record(res.userId, res.id, cost));

/** Writes the outbox to Postgres, then checks both stores against it. */
async function reconciled(t: Test, s: Stores) {
  const writer = new OutboxWriter(s.sql, s.hot, silent, { batchMax: 500, pauseMs: 0 });
  writer.start();
  await writer.drained();
  await writer.stop();
  const report = await reconcile(s.sql, s.hot);
  t.same(report.mismatches, [], 'Postgres reconciles');
  t.same(report.hotMismatches, [], 'the hot store reconciles');
  t.equal(report.ok, true);
}

/** Stores, a user credited `nano`, a leasing ledger and a payer without limits. */
async function setUp(t: Test, nano: bigint) {
  const s = await testStores(t);
  const userId = await funded(s, nano);
  return { s, userId, ledger: leasing(s), p: payer(userId) };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as GatewayError,
  );

t.test('one store call opens a lease that many requests draw from; costs leave it as they are charged', async (t) => {
  const { s, userId, ledger, p } = await setUp(t, 1_000_000_000n);

  const first = await ledger.reserve(p, 1_000n);
  t.ok(first.lease, 'drawn from a lease');
  t.same(await s.hot.balance(userId), { balance: 1_000_000_000n, reserved: 32_000n }, 'the lease holds 32 worst cases');
  const more: Reservation[] = [];
  for (let i = 0; i < 31; i++) more.push(await ledger.reserve(p, 1_000n));
  t.same(
    await s.hot.balance(userId),
    { balance: 1_000_000_000n, reserved: 32_000n },
    '31 more requests: no store call, nothing more held',
  );
  t.ok(
    more.every((r) => r.lease === first.lease),
    'all from the one lease',
  );
  const past = await ledger.reserve(p, 1_000n);
  t.same(
    await s.hot.balance(userId),
    { balance: 1_000_000_000n, reserved: 64_000n },
    'the 33rd tops the lease up by 32 more',
  );

  await ledger.release(first);
  t.same(await s.hot.balance(userId), { balance: 1_000_000_000n, reserved: 64_000n }, 'a release stays in the process');
  t.equal(await settle(ledger, past, 700n), 700n);
  t.same(await s.hot.balance(userId), { balance: 999_999_300n, reserved: 63_300n }, 'charged, and no longer held');
  t.equal(await settle(ledger, past, 700n), 0n, 'settling twice takes nothing');
  t.equal(await settle(ledger, more[0], 5_000n), 5_000n, 'a cost past the worst case is charged in full');
  t.same(await s.hot.balance(userId), { balance: 999_994_300n, reserved: 58_300n });
  for (const r of more.slice(1)) await settle(ledger, r, 500n);
  t.same(await s.hot.balance(userId), { balance: 999_979_300n, reserved: 43_300n });

  await ledger.stop();
  t.same(await s.hot.balance(userId), { balance: 999_979_300n, reserved: 0n }, 'stopping hands the lease back');
  await reconciled(t, s);
});

t.test('a balance covering exactly 20 requests: 200 at once in one process, 20 served', async (t) => {
  const { ledger, p } = await setUp(t, 20_000n);
  const results = await Promise.all(
    Array.from({ length: 200 }, () => refusal(ledger.reserve(p, 1_000n)).then((e) => e ?? 'ok')),
  );
  const served = results.filter((r) => r === 'ok').length;
  t.equal(served, 20, 'every nano of the balance used, none past it');
  t.ok(
    results.every((r) => r === 'ok' || (r as GatewayError).kind === 'insufficient_balance'),
    'the rest refused as insufficient balance',
  );
  const err = await refusal(ledger.reserve(p, 1n));
  t.match(err?.message, /\$0\.000000001 but \$0\.00 is available/, 'the refusal says what is available');
  await ledger.stop();
});

t.test('two processes share one balance: never more served than it covers, and every charge exact', async (t) => {
  const s = await testStores(t);
  const userId = await funded(s, 20_000n);
  const a = leasing(s);
  const b = leasing(s);
  const p = payer(userId);
  const run = (ledger: Ledger) =>
    refusal(
      ledger.reserve(p, 1_000n).then(async (res) => {
        await sleep(5);
        await settle(ledger, res, 1_000n);
      }),
    );
  const results = await Promise.all(Array.from({ length: 200 }, (_, i) => run(i % 2 ? a : b)));
  const served = results.filter((r) => r === null).length;
  t.ok(served <= 20, `served ${served}: at most what the balance covers`);
  t.ok(served >= 10, 'and most of it');
  await a.stop();
  await b.stop();
  const hot = await s.hot.balance(userId);
  t.same(
    hot,
    { balance: 20_000n - BigInt(served) * 1_000n, reserved: 0n },
    'charged exactly what was served; nothing held',
  );
  await reconciled(t, s);
});

t.test('a cost past the whole lease: charged in full, and the lease counts its hold as the store does', async (t) => {
  const { s, userId, ledger, p } = await setUp(t, 8_000n);
  const res = await ledger.reserve(p, 1_000n);
  t.same(
    await s.hot.balance(userId),
    { balance: 8_000n, reserved: 1_000n },
    'a lease of one worst case: an eighth of the balance',
  );
  t.equal(await settle(ledger, res, 3_000n), 3_000n, 'charged in full');
  t.same(await s.hot.balance(userId), { balance: 5_000n, reserved: 0n });
  t.equal(res.lease!.size, 0n, 'the lease counts what the store took (1,000), not the cost');
  const next = await ledger.reserve(p, 1_000n);
  t.equal(next.lease, res.lease, 'drawn from the same lease, topped up');
  await settle(ledger, next, 1_000n);
  await ledger.stop();
  t.same(await s.hot.balance(userId), { balance: 4_000n, reserved: 0n }, 'handed back whole: no hold left behind');
});

t.test('keys with limits hold per request, not from a lease', async (t) => {
  const { s, userId, ledger } = await setUp(t, 1_000_000n);
  const res = await ledger.reserve(payer(userId, { rpm: 100, spendNano: null, spendPeriod: null }), 1_000n);
  t.equal(res.lease, undefined);
  t.same(await s.hot.balance(userId), { balance: 1_000_000n, reserved: 1_000n }, 'a hold of its own');
  await ledger.release(res);
  t.same(await s.hot.balance(userId), { balance: 1_000_000n, reserved: 0n });
  await ledger.stop();
});

t.test(
  "as the gateway runs them (soloFirst): a user's first request of a window holds on its own, the second opens the lease",
  async (t) => {
    const s = await testStores(t);
    const userId = await funded(s, 1_000_000n);
    const clock = new ManualClock();
    const calls: string[] = [];
    const ledger = new Ledger(s.sql, s.hot, {
      ttlMs: 60_000,
      outboxMax: 0,
      leases: {
        windowMs: 150,
        requests: 32,
        clock,
        soloFirst: true,
        observer: { drawn: () => {}, called: (mode) => calls.push(mode) },
      },
    });
    const p = payer(userId);
    const first = await ledger.reserve(p, 1_000n);
    t.equal(first.lease, undefined, 'the first request holds on its own');
    t.same(calls, [], 'no lease call');
    t.same(await s.hot.balance(userId), { balance: 1_000_000n, reserved: 1_000n }, 'its hold is in the store');
    const second = await ledger.reserve(p, 1_000n);
    t.ok(second.lease, 'the second, within the window, draws from a lease');
    t.same(calls, ['open'], 'which it opened');
    await settle(ledger, first, 100n);
    await settle(ledger, second, 200n);
    await clock.advance(100);
    const later = await ledger.reserve(p, 1_000n);
    t.ok(later.lease, 'a user with a lease here keeps drawing from it');
    await settle(ledger, later, 300n);
    await clock.advance(1_000);
    const afterIdle = await ledger.reserve(p, 1_000n);
    t.equal(
      afterIdle.lease,
      undefined,
      'once the lease was handed back and a window passed, the first request holds on its own again',
    );
    await settle(ledger, afterIdle, 400n);
    t.same(await s.hot.balance(userId), { balance: 999_000n, reserved: 0n }, 'charged exactly, nothing held');
    await ledger.stop();
    await reconciled(t, s);
  },
);

t.test('a lease is renewed after its window, handed back when idle, and one found gone is replaced', async (t) => {
  const s = await testStores(t);
  const userId = await funded(s, 1_000_000n);
  const redis = new Redis(REDIS_URL);
  t.teardown(() => redis.disconnect());
  const base = new RedisLayout(s.redisPrefix).userBase(userId);
  const resx = `${base}:resx`;
  // The window and the idle hand-back are this process's time: moved on by the test. The hold's
  // expiry in Redis is Redis's.
  const clock = new ManualClock();
  const calls: string[] = [];
  const ledger = leasing(s, {
    windowMs: 150,
    clock,
    observer: { drawn: () => {}, called: (mode) => calls.push(mode) },
  });
  const p = payer(userId);

  const r1 = await ledger.reserve(p, 1_000n);
  t.same(calls.splice(0), ['open', 'open'], 'opened (once more after the account was loaded into Redis)');
  const expiry1 = Number(await redis.zscore(resx, r1.lease!.id));
  await clock.advance(100);
  const within = await ledger.reserve(p, 1_000n);
  t.same(calls, [], 'within the window: drawn with no store call');
  await clock.advance(100);
  const r2 = await ledger.reserve(p, 1_000n);
  t.equal(r2.lease, r1.lease, 'the same lease');
  t.same(calls, ['extend'], 'past the window: renewed by the next draw');
  t.ok(Number(await redis.zscore(resx, r1.lease!.id)) >= expiry1, 'its expiry in Redis set again');

  await settle(ledger, r1, 100n);
  await settle(ledger, within, 0n);
  await settle(ledger, r2, 100n);
  await clock.advance(100);
  t.same(calls, ['extend'], 'drawn from less than a window ago: kept');
  await clock.advance(200);
  t.same(calls, ['extend', 'close'], 'idle for a window: handed back');
  t.same(await s.hot.balance(userId), { balance: 999_800n, reserved: 0n }, 'the hold is given back whole');
  t.equal(await redis.zscore(resx, r1.lease!.id), null, 'its hold is gone');

  // A lease whose hold vanished (Redis lost it): its requests are still charged, and it is
  // never drawn from again.
  const r3 = await ledger.reserve(p, 1_000n);
  await redis.hdel(`${base}:res`, r3.lease!.id);
  await redis.zrem(resx, r3.lease!.id);
  await redis.set(`${base}:resv`, '0');
  t.equal(await settle(ledger, r3, 300n), 300n, 'charged');
  t.equal(r3.lease!.dead, true, 'the lease is dropped');
  const r4 = await ledger.reserve(p, 1_000n);
  t.not(r4.lease, r3.lease, 'the next request opens a new one');
  await ledger.release(r4);
  await ledger.stop();
  t.same(await s.hot.balance(userId), { balance: 999_500n, reserved: 0n });
});

t.test("a crashed process's lease expires like a hold, freeing the balance", async (t) => {
  const s = await testStores(t);
  const userId = await funded(s, 16_000n);
  const crashed = leasing(s, { ttlMs: 300, windowMs: 100 });
  await crashed.reserve(payer(userId), 1_000n); // never settled: the process is gone
  const other = leasing(s);
  const err = await refusal(other.reserve(payer(userId), 16_000n));
  t.equal(err?.kind, 'insufficient_balance', 'held by the lease meanwhile');
  t.match(err?.message, /\$0\.000014 is available/);
  // Redis expires the hold by its own clock: real time.
  await sleep(600);
  const res = await other.reserve(payer(userId), 16_000n);
  t.ok(res, 'the whole balance once the lease expired');
  await settle(other, res, 16_000n);
  await other.stop();
  t.same(await s.hot.balance(userId), { balance: 0n, reserved: 0n }, 'spent to zero, not below');
});

t.test('a store that cannot be reached: no lease is drawn from until one call reaches it again', async (t) => {
  const { s, userId } = await setUp(t, 1_000_000n);
  const down = new RedisHotStore('redis://127.0.0.1:1', 'down:', { timeoutMs: 200 });
  t.teardown(() => down.close());
  const unreachable = new Ledger(s.sql, down, {
    ttlMs: 60_000,
    outboxMax: 0,
    leases: { windowMs: 60_000, requests: 32 },
  });
  t.equal((await refusal(unreachable.reserve(payer(userId), 1n)))?.kind, 'unavailable', 'no lease to be had: 503');

  // A lease in hand when the store goes: the settle that fails suspends every lease.
  const hot = new RedisHotStore(REDIS_URL, s.redisPrefix, { timeoutMs: 200 });
  const ledger = new Ledger(s.sql, hot, { ttlMs: 60_000, outboxMax: 0, leases: { windowMs: 60_000, requests: 32 } });
  const p = payer(userId);
  const first = await ledger.reserve(p, 1_000n);
  const second = await ledger.reserve(p, 1_000n);
  t.equal(second.lease, first.lease, 'both from one lease, which holds 30 more');
  await hot.close();
  t.equal(
    await ledger.settleEventually(first, 400n, record(userId, first.id, 400n)),
    false,
    'the charge waits for the store',
  );
  t.equal(
    (await refusal(ledger.reserve(p, 1_000n)))?.kind,
    'unavailable',
    'the lease is not drawn from while the store is away',
  );
  await ledger.release(second);
  t.equal(first.lease!.drawn, 0n, 'nothing drawn');
  t.equal(first.lease!.size, 32_000n - 400n, 'the waiting charge counted as taken');
  await ledger.stop();
  await unreachable.stop();
});

t.test('Redis lost its data: the leases it held are not drawn from again', async (t) => {
  const { s, userId, ledger, p } = await setUp(t, 1_000_000n);
  const hot = s.hot as RedisHotStore;
  await hot.startWatching({ intervalMs: 50, committed: async () => new Set(), onLost: () => ledger.suspendLeases() });
  const first = await ledger.reserve(p, 1_000n);
  await settle(ledger, first, 100n);
  const redis = new Redis(REDIS_URL);
  t.teardown(() => redis.disconnect());
  // A flush of this gateway's keys: the lease's hold, the account and the epoch with them.
  const keys = await redis.keys(`${s.redisPrefix}*`);
  await redis.del(...keys);
  await sleep(300);
  const next = await ledger.reserve(p, 1_000n);
  t.not(next.lease, first.lease, 'a new lease, opened against the account loaded again');
  t.same(
    await s.hot.balance(userId),
    { balance: 1_000_000n, reserved: 32_000n },
    'held in Redis again; the lost settle is not in Postgres, as nothing wrote it',
  );
  await ledger.release(next);
  await ledger.stop();
});

// Requests of very different worst cases drawing from one lease: a draw that does not fit what
// the lease has left must top it up first, never take more than it holds. (Equal draws cannot
// tell `free < amount` from a looser comparison: the lease is always a whole number of them.)
const MIXED = [1_000n, 17n, 9_000n, 250n, 4_321n, 1n, 12_000n, 600n, 7_777n, 3n, 2_500n, 40n];

/** Checks a drawn request against its lease and the store: drawn within what the lease holds. */
function withinLease(t: Test, res: Reservation, what: string) {
  const lease = res.lease!;
  if (lease.drawn > lease.size) t.fail(`${what}: the lease lent ${lease.drawn} but holds ${lease.size}`);
}

t.test(
  'mixed worst cases from one lease: never drawn past its hold, nor past the balance; every charge exact',
  async (t) => {
    const balance = 50_000n;
    const { s, userId, ledger, p } = await setUp(t, balance);
    // One at a time: each draw either fits what the lease holds undrawn, or tops it up first.
    const held: Reservation[] = [];
    let refused = 0;
    for (let i = 0; i < 60; i++) {
      const amount = MIXED[i % MIXED.length];
      const res = await refusal(ledger.reserve(p, amount).then((r) => (held.push(r), null)));
      if (res) {
        t.equal(res.kind, 'insufficient_balance');
        refused++;
        continue;
      }
      const r = held.at(-1)!;
      t.equal(r.amount, amount);
      withinLease(t, r, `draw ${i} of ${amount}`);
      const hot = (await s.hot.balance(userId))!;
      t.equal(hot.reserved, r.lease!.size, `draw ${i}: the store holds what the lease counts`);
      const drawn = held.reduce((sum, h) => sum + h.amount, 0n);
      t.equal(r.lease!.drawn, drawn, `draw ${i}: the lease lent exactly the worst cases drawn`);
      t.ok(drawn <= balance, `draw ${i}: ${drawn} drawn, within the balance`);
    }
    t.ok(refused > 0, 'the balance ran out before the requests did');
    const served = held.reduce((sum, h) => sum + h.amount, 0n);
    t.ok(served > balance - 12_000n, `most of the balance was lent (${served})`);

    // Settle each at a cost of its own (some past the worst case), release some: exact.
    let charged = 0n;
    for (const [i, r] of held.entries()) {
      if (i % 5 === 4) {
        await ledger.release(r);
        continue;
      }
      const cost = i % 7 === 3 ? r.amount + 11n : (r.amount * BigInt(i % 4)) / 3n;
      t.equal(await settle(ledger, r, cost), cost);
      charged += cost;
      withinLease(t, r, `settle ${i}`);
    }
    const lease = held[0].lease!;
    t.equal(lease.drawn, 0n, 'nothing left drawn');
    t.same(
      await s.hot.balance(userId),
      { balance: balance - charged, reserved: lease.size },
      'charged exactly; the store holds what the lease counts',
    );
    await ledger.stop();
    t.same(await s.hot.balance(userId), { balance: balance - charged, reserved: 0n }, 'handed back whole');
    await reconciled(t, s);
  },
);

t.test(
  'mixed worst cases at once, in one process and in two sharing a balance: never more lent than held or than the balance',
  async (t) => {
    for (const processes of [1, 2]) {
      await t.test(`${processes} process(es)`, async (t) => {
        const balance = 100_000n;
        const s = await testStores(t);
        const userId = await funded(s, balance);
        const ledgers = Array.from({ length: processes }, () => leasing(s));
        const p = payer(userId);
        const held: { r: Reservation; ledger: Ledger }[] = [];
        let overdrawn = 0;
        // Two waves of 120 at once: none settled, so what is drawn is what is held.
        for (let wave = 0; wave < 2; wave++) {
          await Promise.all(
            Array.from({ length: 120 }, (_, i) => {
              const ledger = ledgers[i % processes];
              return refusal(
                ledger.reserve(p, MIXED[(i * 5 + wave) % MIXED.length]).then((r) => {
                  held.push({ r, ledger });
                  if (r.lease!.drawn > r.lease!.size) overdrawn++;
                }),
              ).then((e) => {
                if (e && e.kind !== 'insufficient_balance') t.fail(`refused with ${e.kind}`);
              });
            }),
          );
        }
        t.equal(overdrawn, 0, 'no draw took a lease past its hold');
        const leases = [...new Set(held.map(({ r }) => r.lease!))];
        t.ok(leases.length >= processes, `${leases.length} lease(s)`);
        for (const l of leases) {
          t.equal(
            l.drawn,
            held.filter(({ r }) => r.lease === l).reduce((sum, { r }) => sum + r.amount, 0n),
            'each lease lent exactly its draws',
          );
          t.ok(l.drawn <= l.size, `lent ${l.drawn} of the ${l.size} it holds`);
        }
        const lent = held.reduce((sum, { r }) => sum + r.amount, 0n);
        const hot = (await s.hot.balance(userId))!;
        t.equal(
          hot.reserved,
          leases.reduce((sum, l) => sum + l.size, 0n),
          'the store holds what the leases count',
        );
        t.ok(hot.reserved <= balance, 'every lease together within the balance');
        t.ok(lent <= balance, `lent ${lent}: within the balance`);
        t.ok(lent > balance / 2n, 'and a good part of it');

        // Each settles in its own process, at a cost of its own (some past the worst case).
        let charged = 0n;
        await Promise.all(
          held.map(({ r, ledger }, i) => {
            const cost = (r.amount * BigInt(i % 6)) / 4n;
            charged += cost;
            return settle(ledger, r, cost);
          }),
        );
        for (const l of leases) t.equal(l.drawn, 0n, 'nothing left drawn');
        t.equal(
          (await s.hot.balance(userId))!.reserved,
          leases.reduce((sum, l) => sum + l.size, 0n),
          'after the settles too',
        );
        for (const l of ledgers) await l.stop();
        t.same(
          await s.hot.balance(userId),
          { balance: balance - charged, reserved: 0n },
          'charged exactly what was served; nothing held',
        );
        await reconciled(t, s);
      });
    }
  },
);
