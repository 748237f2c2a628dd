// The hot-store contract (src/store/hot.ts), run against both implementations: Redis (real
// server, own key prefix) and the in-process twin. Whatever one does, the other must do too.

import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import {
  SETTLED_MEMORY_MS,
  type AckItem,
  type HotStore,
  type OutboxEntry,
  type ReserveRequest,
  type SettleRequest,
} from '../../src/store/hot.js';
import { MemoryHotStore } from '../../src/store/hot-memory.js';
import { RedisHotStore } from '../../src/store/hot-redis.js';
import { RedisLayout } from '../../src/store/redis-layout.js';
import { waitFor } from '../helpers/child.js';
import { clusterAvailable, dropClusterPrefix, startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.js';
import { dropRedisPrefix, REDIS_URL, testRedisPrefix } from '../helpers/stores.js';
import { usageRecord as record } from '../helpers/usage-record.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Impl {
  name: string;
  /** A fresh store; `peer` opens a second one on the same data (another process, for Redis). */
  open(t: Test): Promise<{ store: HotStore; peer: () => HotStore }>;
  skip?: string;
}

const IMPLS: Impl[] = [
  {
    name: 'RedisHotStore',
    async open(t) {
      const prefix = testRedisPrefix();
      const opened: HotStore[] = [];
      const make = () => {
        const s = new RedisHotStore(REDIS_URL, prefix);
        opened.push(s);
        return s;
      };
      t.teardown(async () => {
        await Promise.all(opened.map((s) => s.close()));
        await dropRedisPrefix(prefix);
      });
      return { store: make(), peer: make };
    },
  },
  {
    // The same store on a Redis Cluster of three masters, started once for this file.
    name: 'RedisHotStore on a Redis Cluster',
    skip: clusterAvailable() ? undefined : 'no redis-server or redis-cli here',
    async open(t) {
      const prefix = testRedisPrefix();
      const seeds = (await sharedCluster()).seeds.split(',');
      const opened: HotStore[] = [];
      const make = () => {
        const s = new RedisHotStore(seeds, prefix);
        opened.push(s);
        return s;
      };
      t.teardown(async () => {
        await Promise.all(opened.map((s) => s.close()));
        await dropClusterPrefix(seeds, prefix);
      });
      return { store: make(), peer: make };
    },
  },
  {
    name: 'MemoryHotStore',
    async open(t) {
      const store = new MemoryHotStore();
      t.teardown(() => store.close());
      return { store, peer: () => store };
    },
  },
];

/** One cluster for every test of this file that wants one, stopped when the file is done. */
let cluster: Promise<RedisCluster> | undefined;
const sharedCluster = () => {
  if (!cluster) {
    cluster = startRedisCluster({ masters: 3 });
    t.teardown(async () => (await cluster!).stop());
  }
  return cluster;
};

const user = () => randomUUID();

/** Defaults for the calls the tests do not care to spell out. */
const reserve = (
  store: HotStore,
  userId: string,
  id: string,
  amount: bigint,
  ttlMs = 60_000,
  extra: Partial<ReserveRequest> = {},
) => store.reserve({ userId, reservationId: id, amount, ttlMs, keyId: 'k1', rpmLimit: 0, outboxMax: 0, ...extra });

const prime = (
  store: HotStore,
  userId: string,
  balance: bigint,
  charged = 0n,
  keySpend: Record<string, bigint> = {},
  creditSeq = 0n,
  limitsSeq = 0n,
) => store.primeBalance(userId, { balance, charged, keySpend, creditSeq, limitsSeq });

const settle = (store: HotStore, userId: string, id: string, cost: bigint, extra: Partial<SettleRequest> = {}) =>
  store.settle({ userId, reservationId: id, cost, keyId: 'k1', record: record(userId, id, cost), ...extra });

/** Reads everything in the outbox as one consumer (non-blocking). */
async function readAll(store: HotStore, consumer = 'c1'): Promise<OutboxEntry[]> {
  return store.readOutbox(consumer, 1000, 10);
}

const ack = (store: HotStore, entries: OutboxEntry[], kind: AckItem['kind'] = 'inserted', chargedAfter = 0n) =>
  store.ackOutbox(entries.map((entry) => ({ entry, kind, chargedAfter })));

for (const impl of IMPLS) {
  t.test(impl.name, { skip: impl.skip }, async (t) => {
    t.test('200 concurrent reservations against a balance covering exactly 20', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 20_000n);
      const started = performance.now();
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => reserve(store, u, `r${i}`, 1_000n)));
      const ms = performance.now() - started;
      t.equal(results.filter((r) => r.status === 'ok').length, 20, 'exactly 20 granted');
      t.equal(results.filter((r) => r.status === 'insufficient').length, 180, 'the rest refused');
      const okAvail = results.flatMap((r) => (r.status === 'ok' ? [r.available] : [])).sort((a, b) => (a < b ? -1 : 1));
      t.same(
        okAvail,
        Array.from({ length: 20 }, (_, i) => BigInt(i * 1000)),
        'each grant saw the balance the previous ones left',
      );
      t.same(await store.balance(u), { balance: 20_000n, reserved: 20_000n }, 'balance untouched, all of it reserved');
      t.comment(
        `${impl.name}: 200 concurrent reserve() calls in ${ms.toFixed(1)} ms (${Math.round(200 / (ms / 1000))}/s)`,
      );
    });

    t.test('reserve: unknown account, exact fit, one nano too many', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      t.same(await reserve(store, u, 'a', 1n), { status: 'unknown' }, 'not loaded: unknown');
      await prime(store, u, 1_000n);
      t.same(await reserve(store, u, 'b', 1_001n), { status: 'insufficient', available: 1_000n });
      t.same(await reserve(store, u, 'c', 1_000n), { status: 'ok', available: 0n });
      t.same(await reserve(store, u, 'd', 1n), { status: 'insufficient', available: 0n });
      t.same(await reserve(store, u, 'e', 0n), { status: 'ok', available: 0n }, 'a zero hold fits an empty balance');
    });

    t.test('a hold made twice is held once', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 5_000n);
      const cap = { limit: 3_000n, field: 'ks:k1:2026-12' };
      t.same(await reserve(store, u, 'a', 2_000n, 60_000, { spend: cap }), { status: 'ok', available: 3_000n });
      t.same(
        await reserve(store, u, 'a', 2_000n, 60_000, { spend: cap }),
        { status: 'ok', available: 3_000n },
        'the repeat is granted without holding again',
      );
      t.same(await store.balance(u), { balance: 5_000n, reserved: 2_000n }, 'held once');
      t.same(
        await reserve(store, u, 'b', 1_000n, 60_000, { spend: cap }),
        { status: 'ok', available: 2_000n },
        "the key's cap counts the hold once",
      );
    });

    t.test('settle charges the exact cost, releases the rest and appends the record', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 20_000n);
      t.equal((await reserve(store, u, 'a', 5_000n)).status, 'ok');
      t.equal((await reserve(store, u, 'b', 3_000n)).status, 'ok');
      t.same(await store.balance(u), { balance: 20_000n, reserved: 8_000n });
      const s1 = await settle(store, u, 'a', 1_234n);
      t.equal(s1.duplicate, false);
      t.ok(s1.entryId, 'an outbox entry');
      t.same(await store.balance(u), { balance: 18_766n, reserved: 3_000n }, 'charged 1234, released the other 3766');
      await store.settle({ userId: u, reservationId: 'b', cost: 0n, keyId: 'k1' });
      t.same(await store.balance(u), { balance: 18_766n, reserved: 0n }, 'a release holds nothing any more');
      t.equal(await store.outboxLength(), 1, 'a release records nothing');
      const entries = await readAll(store);
      t.equal(entries.length, 1);
      t.equal(entries[0].id, s1.entryId);
      t.equal(entries[0].record.costNano, 1_234n);
      t.equal(entries[0].record.settleId, 'a');
      t.type(entries[0].record.createdAt, Date);
      t.not(entries[0].generation, '', 'charged to a loaded account: carries its generation');
      await t.rejects(
        store.settle({ userId: u, reservationId: 'c', cost: 5n, keyId: 'k1' }),
        /needs its usage record/,
        'a charge without its record is refused',
      );
    });

    t.test('settle is idempotent per reservation id; a late settle still charges, once', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 10_000n);
      await reserve(store, u, 'once', 4_000n);
      const first = await settle(store, u, 'once', 2_500n);
      t.equal(first.duplicate, false);
      const repeat = { duplicate: true, entryId: first.entryId };
      t.strictSame(await settle(store, u, 'once', 2_500n), repeat, 'the repeat charges nothing, names the first entry');
      t.strictSame(await settle(store, u, 'once', 9_000n), repeat, 'whatever cost it names');
      t.same(await store.balance(u), { balance: 7_500n, reserved: 0n });
      await reserve(store, u, 'late', 1_000n, 30);
      await sleep(80);
      t.same(await store.balance(u), { balance: 7_500n, reserved: 0n }, 'expired hold released');
      const late = await settle(store, u, 'late', 700n);
      t.equal(late.duplicate, false, 'late settle charges the usage');
      t.strictSame(await settle(store, u, 'late', 700n), { duplicate: true, entryId: late.entryId }, 'once');
      await reserve(store, u, 'freed', 500n);
      await store.settle({ userId: u, reservationId: 'freed', cost: 0n, keyId: 'k1' });
      t.strictSame(
        await store.settle({ userId: u, reservationId: 'freed', cost: 0n, keyId: 'k1' }),
        { duplicate: true },
        'a repeated release names no entry: it wrote none',
      );
      t.same(await store.balance(u), { balance: 6_800n, reserved: 0n }, 'nothing released twice');
      t.equal(await store.outboxLength(), 2, 'one record per charge');
    });

    t.test('a cost above the hold and the balance is charged in full: the balance goes below zero', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 1_000n);
      await reserve(store, u, 'a', 1_000n);
      await settle(store, u, 'a', 5_000n);
      t.same(await store.balance(u), { balance: -4_000n, reserved: 0n }, 'nothing written off');
      t.same(
        await reserve(store, u, 'b', 1n),
        { status: 'insufficient', available: -4_000n },
        'refused until a deposit',
      );
      t.equal((await reserve(store, u, 'c', 0n)).status, 'insufficient', 'even a zero hold, while in debt');
      await store.credit(u, 4_001n, 1n);
      t.same(await reserve(store, u, 'd', 1n), { status: 'ok', available: 0n }, 'the credit pays the debt first');
    });

    t.test('settle with no account loaded charges nothing here, records everything', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      const r = await settle(store, u, 'x', 10n);
      t.equal(r.duplicate, false);
      t.equal(await store.balance(u), null, 'no account appears');
      const [entry] = await readAll(store);
      t.equal(entry.generation, '', 'unaccounted: the acknowledgement will correct a later account');
      t.equal(entry.record.costNano, 10n);
    });

    t.test('an expired reservation is released', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 1_000n);
      const at = Date.now();
      t.equal((await reserve(store, u, 'short', 1_000n, 50)).status, 'ok');
      const blocked = await reserve(store, u, 'blocked', 1n);
      // On a loaded machine the second call may come after the 50 ms: only then may it pass.
      if (Date.now() - at < 45) t.equal(blocked.status, 'insufficient', 'held while alive');
      else t.comment('second call came too late to see the hold alive');
      if (blocked.status === 'ok') await store.settle({ userId: u, reservationId: 'blocked', cost: 0n, keyId: 'k1' });
      await sleep(120);
      t.same(await store.balance(u), { balance: 1_000n, reserved: 0n }, 'balance() releases it');
      t.equal((await reserve(store, u, 'again', 1_000n)).status, 'ok', 'and the whole balance is available again');
    });

    t.test('credit only affects a loaded account; prime is set-if-absent; forget', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await store.credit(u, 500n, 1n);
      t.equal(await store.balance(u), null, 'credit to an unloaded account does not create one');
      t.same(await prime(store, u, 100n, 0n, {}, 1n), { balance: 100n, reserved: 0n }, 'a load answers what it loaded');
      t.equal(await prime(store, u, 999n), null, 'the second answers that one was loaded');
      t.same(await store.balance(u), { balance: 100n, reserved: 0n }, 'the second prime is ignored');
      await store.credit(u, 50n, 2n);
      t.same(await store.balance(u), { balance: 150n, reserved: 0n });
      await reserve(store, u, 'held', 20n);
      await store.forgetBalance(u);
      t.equal(await store.balance(u), null);
      t.same(await reserve(store, u, 'a', 1n), { status: 'unknown' });
      t.same(
        await prime(store, u, 150n, 0n, {}, 2n),
        { balance: 150n, reserved: 20n },
        'a load counts the holds that outlived the account',
      );
      t.same(await store.balance(u), { balance: 150n, reserved: 20n }, 'holds outlive a forgotten account');
    });

    // creditBalance commits a credit in Postgres, then tells the hot store; an account's load
    // reads its snapshot, then primes. Every order of the four steps counts the credit once.
    t.test("a credit racing the account's load is counted once, whatever the order", async (t) => {
      const { store } = await impl.open(t);
      const bal = async (u: string) => (await store.balance(u))?.balance;
      // Read before the commit, loaded after the credit reached the store: the load takes it.
      const a = user();
      await store.credit(a, 50n, 1n);
      await prime(store, a, 100n);
      t.equal(await bal(a), 150n, 'snapshot, commit, credit, load');
      // Read after the commit, loaded before the credit reached the store: not taken twice.
      const b = user();
      await prime(store, b, 150n, 0n, {}, 1n);
      await store.credit(b, 50n, 1n);
      t.equal(await bal(b), 150n, 'commit, snapshot, load, credit');
      // Read before, loaded before: the loaded account takes it.
      const c = user();
      await prime(store, c, 100n);
      await store.credit(c, 50n, 1n);
      t.equal(await bal(c), 150n, 'snapshot, load, commit, credit');
      // Read after, credit before the load: in the snapshot already.
      const d = user();
      await store.credit(d, 50n, 1n);
      await prime(store, d, 150n, 0n, {}, 1n);
      t.equal(await bal(d), 150n, 'commit, credit, snapshot, load');
      // Two credits telling the store in the other order than they committed; then a debit.
      const e = user();
      await prime(store, e, 100n, 0n, {}, 3n);
      await store.credit(e, 7n, 5n);
      await store.credit(e, 5n, 4n);
      await store.credit(e, -2n, 6n);
      t.equal(await bal(e), 110n, 'each once, in any order, a debit too');
      // An account loaded again from a snapshot older than a credit it had taken.
      await store.forgetBalance(e);
      await prime(store, e, 105n, 0n, {}, 4n);
      t.equal(await bal(e), 110n, 'a later load takes again what its snapshot lacks');
      await store.forgetBalance(e);
      await prime(store, e, 110n, 0n, {}, 6n);
      t.equal(await bal(e), 110n, 'and nothing its snapshot holds');
    });

    // A spend cap's change commits, then drops the account with the change's number; a load
    // racing it may hold a snapshot read before the commit, without the new cap's spend.
    t.test('a load from a snapshot older than a cap change is refused, and nothing is loaded', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 100n);
      await store.forgetBalance(u, 2n);
      t.equal(await prime(store, u, 100n, 0n, {}, 0n, 1n), 'stale', 'a snapshot holding one change of two');
      t.equal(await store.balance(u), null, 'no account was loaded');
      await store.forgetBalance(u, 1n);
      t.equal(await prime(store, u, 100n, 0n, {}, 0n, 1n), 'stale', 'an older change heard later lowers nothing');
      t.same(
        await prime(store, u, 100n, 0n, { 'ks:k1:d': 40n }, 0n, 2n),
        { balance: 100n, reserved: 0n },
        'one read after the change loads',
      );
      t.same(
        await reserve(store, u, 'r', 30n, 60_000, { spend: { limit: 50n, field: 'ks:k1:d' } }),
        { status: 'key_limit', spent: 40n },
        'with the spend the cap counts from',
      );
      await store.forgetBalance(u);
      t.same(
        await prime(store, u, 100n, 0n, {}, 0n, 2n),
        { balance: 100n, reserved: 0n },
        'a plain forget marks nothing',
      );
      const v = user();
      await store.forgetBalance(v, 1n);
      t.equal(await prime(store, v, 5n), 'stale', 'an account never loaded is marked too');
    });

    t.test('amounts beyond 32 bits stay exact', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      const big = 123_456_789_012_345n; // $123,456.789012345
      await prime(store, u, big);
      t.same(await reserve(store, u, 'a', big - 1n), { status: 'ok', available: 1n });
      await settle(store, u, 'a', 1_000_000_000n);
      t.same(await store.balance(u), { balance: big - 1_000_000_000n, reserved: 0n });
    });

    t.test('requests per minute per key', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 1_000_000n);
      const results = [];
      for (let i = 0; i < 5; i++) results.push(await reserve(store, u, `r${i}`, 1n, 60_000, { rpmLimit: 3 }));
      // A window boundary may fall inside the loop on a slow machine: then more may pass.
      const limited = results.filter((r) => r.status === 'rate_limited');
      t.ok(limited.length >= 1 && limited.length <= 2, `the 4th and 5th are limited (${limited.length})`);
      const wait = (limited[0] as { retryAfterMs: number }).retryAfterMs;
      t.ok(wait > 0 && wait <= 60_000, `retry after the window (${wait} ms)`);
      t.equal(
        (await reserve(store, u, 'other-key', 1n, 60_000, { rpmLimit: 3, keyId: 'k2' })).status,
        'ok',
        'another key has its own count',
      );
      t.equal((await reserve(store, u, 'unlimited', 1n, 60_000)).status, 'ok', 'no limit, no count');
      const gated = await store.gate(u, 'k1', 3);
      t.ok(typeof gated === 'object' && gated.retryAfterMs > 0, 'count_tokens is limited with the same count');
      t.equal(await store.gate(u, 'k3', 3), 'ok', 'a funded account passes the gate');
      t.equal(await store.gate(user(), 'k1', 0), 'unknown', 'an unloaded account is unknown');
      const poor = user();
      await prime(store, poor, 0n);
      t.equal(await store.gate(poor, 'k1', 0), 'insufficient', 'an empty balance does not pass');
    });

    t.test('spend cap per key: spent + held + this hold', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 1_000_000n, 0n, { 'k:k1:2026-11-23': 400n });
      const spend = { limit: 1_000n, field: 'k:k1:2026-11-23' };
      t.same(await reserve(store, u, 'a', 500n, 60_000, { spend }), { status: 'ok', available: 999_500n });
      t.same(
        await reserve(store, u, 'b', 101n, 60_000, { spend }),
        { status: 'key_limit', spent: 900n },
        '400 spent + 500 held + 101 > 1000',
      );
      t.equal((await reserve(store, u, 'c', 100n, 60_000, { spend })).status, 'ok', 'exactly the cap fits');
      await settle(store, u, 'a', 50n, { spendField: spend.field });
      t.equal(
        (await reserve(store, u, 'd', 450n, 60_000, { spend })).status,
        'ok',
        'settled: 450 spent + 100 held, 450 more fits',
      );
      t.equal((await reserve(store, u, 'e', 1n, 60_000, { spend })).status, 'key_limit');
      // A new period: its field starts empty, and the first charge drops the old one.
      const next = { limit: 1_000n, field: 'k:k1:2026-11-24' };
      await settle(store, u, 'c', 10n, { spendField: next.field, spendFieldBefore: spend.field });
      t.equal(
        (await reserve(store, u, 'f', 1n, 60_000, { spend })).status,
        'ok',
        'the old period was dropped with its count',
      );
      t.same(
        await reserve(store, u, 'g', 600n, 60_000, { spend: next }),
        { status: 'key_limit', spent: 461n },
        '10 spent + 450 + 1 held',
      );
    });

    t.test('a cap counts the holds made under it; those from before it count once settled', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 1_000_000n);
      t.equal((await reserve(store, u, 'before', 800n)).status, 'ok', 'no cap yet');
      const spend = { limit: 1_000n, field: 'k:k1:2026-11-23' };
      t.equal(
        (await reserve(store, u, 'under', 900n, 60_000, { spend })).status,
        'ok',
        'the hold from before the cap is not counted',
      );
      t.same(
        await reserve(store, u, 'over', 101n, 60_000, { spend }),
        { status: 'key_limit', spent: 900n },
        'the one made under it is',
      );
      await settle(store, u, 'before', 800n, { spendField: spend.field });
      await settle(store, u, 'under', 100n, { spendField: spend.field });
      t.same(
        await reserve(store, u, 'after', 101n, 60_000, { spend }),
        { status: 'key_limit', spent: 900n },
        'settled, both count',
      );
      t.same(await store.balance(u), { balance: 999_100n, reserved: 0n }, 'releasing either hold left nothing held');
    });

    t.test('the outbox: consumers, redelivery, acknowledgement', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 1_000_000n);
      for (let i = 0; i < 5; i++) await settle(store, u, `s${i}`, BigInt(i + 1));
      const first = await store.readOutbox('c1', 3, 10);
      t.same(
        first.map((e) => e.record.settleId),
        ['s0', 's1', 's2'],
        'in order, up to the count',
      );
      const second = await store.readOutbox('c2', 10, 10);
      t.same(
        second.map((e) => e.record.settleId),
        ['s3', 's4'],
        'another consumer gets the rest',
      );
      t.same(
        (await store.readOutbox('c1', 10, 10)).map((e) => e.record.settleId),
        ['s0', 's1', 's2'],
        'unacknowledged entries come back to their consumer first',
      );
      await ack(store, first);
      t.equal(await store.outboxLength(), 2);
      t.same(await store.readOutbox('c1', 10, 10), [], 'nothing new, nothing of its own left');
      await ack(store, second);
      t.equal(await store.outboxLength(), 0);
      const started = Date.now();
      t.same(await store.readOutbox('c1', 10, 150), [], 'an empty outbox blocks for the time asked');
      t.ok(Date.now() - started >= 100, 'it waited');
      const waiting = store.readOutbox('c1', 10, 5_000);
      await sleep(30);
      await settle(store, u, 'late', 1n);
      t.same(
        (await waiting).map((e) => e.record.settleId),
        ['late'],
        'a blocked read wakes on a new entry',
      );
    });

    t.test('one acknowledgement of more entries than Lua can unpack at once (9,000)', async (t) => {
      const { store } = await impl.open(t);
      const users = [user(), user()];
      for (const u of users) await prime(store, u, 10_000_000n);
      await Promise.all(Array.from({ length: 9000 }, (_, i) => settle(store, users[i % 2]!, `b${i}`, 1n)));
      const entries = await store.readOutbox('c1', 10_000, 10);
      t.equal(entries.length, 9000);
      await ack(store, entries);
      t.equal(await store.outboxLength(), 0, 'every entry acknowledged and removed');
      t.same(await store.readOutbox('c1', 10_000, 10), [], 'none comes back to its consumer');
      for (const u of users)
        t.same(
          await store.balance(u),
          { balance: 10_000_000n - 4500n, reserved: 0n },
          'charged once each, no correction',
        );
    });

    t.test('acknowledgement corrections, once per entry', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 1_000n, 5_000n);
      await settle(store, u, 'a', 100n);
      await settle(store, u, 'dup', 30n);
      const [a, dup] = await readAll(store);
      await ack(store, [a], 'inserted', 5_100n);
      t.same(
        await store.balance(u),
        { balance: 870n, reserved: 0n },
        'an accounted entry: the settle already charged it',
      );
      await ack(store, [dup], 'duplicate');
      t.same(
        await store.balance(u),
        { balance: 900n, reserved: 0n },
        'a duplicate of a committed charge is given back',
      );
      await ack(store, [dup], 'duplicate');
      t.same(await store.balance(u), { balance: 900n, reserved: 0n }, 'only once');

      // Settled while no account was loaded, then the account is loaded from a snapshot.
      const v = user();
      await settle(store, v, 'early', 40n);
      await settle(store, v, 'seen', 25n);
      const [early, seen] = await readAll(store);
      await prime(store, v, 1_000n, 2_000n); // the snapshot: charged total 2000
      await ack(store, [early], 'inserted', 2_040n);
      t.same(await store.balance(v), { balance: 960n, reserved: 0n }, 'committed after the snapshot: taken now');
      await ack(store, [seen], 'inserted', 1_990n);
      t.same(await store.balance(v), { balance: 960n, reserved: 0n }, 'committed before the snapshot: already in it');

      // An account forgotten and loaded again between the settle and the acknowledgement.
      const w = user();
      await prime(store, w, 1_000n, 0n);
      await settle(store, w, 'x', 10n);
      const [x] = await readAll(store);
      await store.forgetBalance(w);
      await prime(store, w, 1_000n, 0n); // the charge is not committed yet: not in the snapshot
      await ack(store, [x], 'redelivered', 10n);
      t.same(await store.balance(w), { balance: 990n, reserved: 0n }, 'an older generation is treated as unaccounted');
      t.equal(await store.outboxLength(), 0);

      // Acknowledged while no account is loaded, between a snapshot and the load it feeds.
      const z = user();
      await settle(store, z, 'z1', 11n);
      await settle(store, z, 'z2', 22n);
      const [z1, z2] = await readAll(store);
      await ack(store, [z1], 'inserted', 511n); // committed after the snapshot below
      await ack(store, [z2], 'inserted', 500n); // committed before it
      await prime(store, z, 1_000n, 500n); // the snapshot: charged total 500, taken before z1's commit
      t.same(
        await store.balance(z),
        { balance: 989n, reserved: 0n },
        'the late charge after the snapshot is taken at load, the other is in the snapshot',
      );
      await ack(store, [z1], 'redelivered', 511n);
      t.same(await store.balance(z), { balance: 989n, reserved: 0n }, 'and only once, even if acknowledged again');
      await store.forgetBalance(z);
      await prime(store, z, 989n, 511n);
      t.same(await store.balance(z), { balance: 989n, reserved: 0n }, 'a later load does not take it again');
    });

    t.test('snapshotAccounts: balances, holds, outbox sums and the settle ids summed, in one read', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      const v = user();
      await prime(store, u, 1_000n);
      await reserve(store, u, 'h1', 100n);
      await reserve(store, u, 'h2', 50n);
      await settle(store, u, 'h1', 30n);
      await settle(store, v, 'v1', 7n); // v not loaded: unaccounted
      await prime(store, v, 500n);
      await settle(store, v, 'v2', 3n);
      const snap = new Map((await store.snapshotAccounts()).map((a) => [a.userId, a]));
      t.same(snap.get(u), {
        userId: u,
        balance: 970n,
        reserved: 50n,
        holds: 50n,
        pendingAccounted: 30n,
        pendingAccountedIds: ['h1'],
        pendingUnaccounted: 0n,
      });
      t.same(snap.get(v), {
        userId: v,
        balance: 497n,
        reserved: 0n,
        holds: 0n,
        pendingAccounted: 3n,
        pendingAccountedIds: ['v2'],
        pendingUnaccounted: 7n,
      });
    });

    t.test('hit() counts within a window', async (t) => {
      const { store } = await impl.open(t);
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

    t.test('releaseHit() takes one event back, never below zero', async (t) => {
      const { store } = await impl.open(t);
      const a = `login:${user()}`;
      await store.hit(a, 60);
      await store.hit(a, 60);
      await store.releaseHit(a);
      t.equal((await store.hit(a, 60)).count, 2, 'one of two taken back, then one more counted');
      await store.releaseHit(a);
      await store.releaseHit(a);
      await store.releaseHit(a);
      t.equal((await store.hit(a, 60)).count, 1, 'released down to zero, not below');
      const b = `login:${user()}`;
      await store.releaseHit(b);
      const fresh = await store.hit(b, 60);
      t.same(fresh.count, 1, 'releasing an empty bucket leaves it empty');
      t.ok(fresh.ttlS > 55, 'and the next hit opens a window with its expiry');
    });

    t.test('publish reaches subscribers', async (t) => {
      const { store, peer } = await impl.open(t);
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

    t.test(
      'lease: opened within an eighth of what is available, at least what is needed, refused past it',
      async (t) => {
        const { store } = await impl.open(t);
        const u = user();
        const base = { userId: u, give: 0n, ttlMs: 60_000, outboxMax: 0 };
        t.same(
          await store.lease({ ...base, leaseId: 'L1', mode: 'open', need: 1n, grow: 10n }),
          { status: 'unknown' },
          'not loaded',
        );
        await prime(store, u, 80_000n);
        t.same(
          await store.lease({ ...base, leaseId: 'L1', mode: 'open', need: 1_000n, grow: 50_000n }),
          { status: 'ok', granted: 10_000n },
          'an eighth of 80,000',
        );
        t.same(await store.balance(u), { balance: 80_000n, reserved: 10_000n }, 'the lease is a hold');
        t.same(
          await store.lease({ ...base, leaseId: 'L1', mode: 'extend', need: 0n, grow: 500n }),
          { status: 'ok', granted: 500n },
          'grow under the share: all of it',
        );
        t.same(
          await store.lease({ ...base, leaseId: 'L2', mode: 'open', need: 60_000n, grow: 60_000n }),
          { status: 'ok', granted: 60_000n },
          'what is needed, past the share',
        );
        t.same(await store.lease({ ...base, leaseId: 'L3', mode: 'open', need: 9_501n, grow: 9_501n }), {
          status: 'insufficient',
          available: 9_500n,
        });
        t.same(
          await store.lease({ ...base, leaseId: 'L1', mode: 'extend', need: 0n, grow: 0n }),
          { status: 'ok', granted: 0n },
          'a renewal',
        );
        t.same(
          await store.lease({ ...base, leaseId: 'nope', mode: 'extend', need: 0n, grow: 10n }),
          { status: 'gone' },
          'extending a lease that is not there',
        );
        t.same(
          await store.balance(u),
          { balance: 80_000n, reserved: 70_500n },
          'a refusal and a renewal hold nothing more',
        );
        t.same(await store.lease({ ...base, leaseId: 'L2', mode: 'close', need: 0n, grow: 0n, give: 60_000n }), {
          status: 'ok',
          granted: 0n,
        });
        t.same(
          await store.lease({ ...base, leaseId: 'L1', mode: 'close', need: 0n, grow: 0n, give: 500n }),
          { status: 'ok', granted: 0n },
          'a partial hand-back',
        );
        t.same(await store.balance(u), { balance: 80_000n, reserved: 10_000n }, 'handed back');
        const snap = (await store.snapshotAccounts()).find((a) => a.userId === u);
        t.equal(snap?.holds, 10_000n, 'what is left of L1 is a hold like any other');
        t.same(
          await store.lease({ ...base, leaseId: 'L2', mode: 'extend', need: 0n, grow: 1n }),
          { status: 'gone' },
          'a closed lease is gone',
        );
        t.same(
          await store.lease({ ...base, leaseId: 'L1', mode: 'close', need: 0n, grow: 0n, give: 99_999n }),
          { status: 'ok', granted: 0n },
          'more than it holds: all of it',
        );
        t.same(
          await store.lease({ ...base, leaseId: 'L1', mode: 'close', need: 0n, grow: 0n, give: 1n }),
          { status: 'ok', granted: 0n },
          'closing twice is harmless',
        );
        t.same(await store.balance(u), { balance: 80_000n, reserved: 0n });
        t.same(
          await store.lease({ ...base, leaseId: 'L4', mode: 'open', need: 1n, grow: 1n, outboxMax: 1 }),
          { status: 'ok', granted: 1n },
          'an empty outbox is no backlog',
        );
        await settle(store, u, 'x', 1n, { leaseId: 'L4' });
        t.same(
          await store.lease({ ...base, leaseId: 'L4', mode: 'extend', need: 1n, grow: 1n, outboxMax: 1 }),
          { status: 'backlog' },
          'a full outbox refuses growth',
        );
      },
    );

    t.test('settle against a lease: the cost leaves the hold and the balance together, once', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 1_000_000n);
      const lease = (need: bigint, mode: 'open' | 'extend' = 'open') =>
        store.lease({ userId: u, leaseId: 'L', mode, need, grow: need, give: 0n, ttlMs: 60_000, outboxMax: 0 });
      t.same(await lease(10_000n), { status: 'ok', granted: 10_000n });
      const s1 = await settle(store, u, 'a', 3_000n, { leaseId: 'L' });
      t.equal(s1.duplicate, false);
      t.equal(s1.leaseTaken, 3_000n, 'the cost came out of the lease');
      t.notOk(s1.leaseGone, 'the lease was there');
      t.same(
        await store.balance(u),
        { balance: 997_000n, reserved: 7_000n },
        'available unchanged: 990,000 before and after',
      );
      t.strictSame(
        await settle(store, u, 'a', 3_000n, { leaseId: 'L' }),
        { duplicate: true, entryId: s1.entryId },
        'a repeat charges nothing',
      );
      t.same(await store.balance(u), { balance: 997_000n, reserved: 7_000n });
      t.equal((await settle(store, u, 'b', 9_000n, { leaseId: 'L' })).leaseTaken, 7_000n, 'all the hold had left');
      t.same(
        await store.balance(u),
        { balance: 988_000n, reserved: 0n },
        'a cost past the hold: charged in full, the hold stops at zero',
      );
      t.same(await lease(0n, 'extend'), { status: 'ok', granted: 0n }, 'an emptied lease is still there');
      const s3 = await settle(store, u, 'c', 500n, { leaseId: 'gone-lease' });
      t.equal(s3.leaseGone, true, 'settled against a lease that is not there: said so');
      t.same(await store.balance(u), { balance: 987_500n, reserved: 0n }, 'and charged all the same');
      const entries = await readAll(store);
      t.same(
        entries.map((e) => [e.record.settleId, e.record.costNano]),
        [
          ['a', 3_000n],
          ['b', 9_000n],
          ['c', 500n],
        ],
        'one record each',
      );
      t.same(await store.settle({ userId: u, reservationId: 'd', cost: 0n, keyId: 'k1', leaseId: 'L' }), {
        duplicate: false,
        leaseTaken: 0n,
      });
      t.same(await store.balance(u), { balance: 987_500n, reserved: 0n }, 'a zero-cost settle changes nothing');
      t.same(
        (await store.settle({ userId: u, reservationId: 'e', cost: 0n, keyId: 'k1', leaseId: 'gone-lease' })).leaseGone,
        true,
        'said of a release too',
      );
    });

    t.test('a lease expires like a hold; extending it then says gone', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 100_000n);
      const base = { userId: u, leaseId: 'L', give: 0n, outboxMax: 0 };
      t.same(await store.lease({ ...base, mode: 'open', need: 5_000n, grow: 5_000n, ttlMs: 150 }), {
        status: 'ok',
        granted: 5_000n,
      });
      t.same(
        await store.lease({ ...base, mode: 'extend', need: 0n, grow: 0n, ttlMs: 400 }),
        { status: 'ok', granted: 0n },
        'renewed for longer',
      );
      await sleep(250);
      t.same(
        await store.balance(u),
        { balance: 100_000n, reserved: 5_000n },
        'the renewal kept it past its first expiry',
      );
      await sleep(250);
      t.same(await store.balance(u), { balance: 100_000n, reserved: 0n }, 'released by the sweep once expired');
      t.same(await store.lease({ ...base, mode: 'extend', need: 0n, grow: 1n, ttlMs: 400 }), { status: 'gone' });
    });

    t.test('lease amounts past 10^14 nano-USD stay exact', async (t) => {
      const { store } = await impl.open(t);
      const u = user();
      await prime(store, u, 8_000_000_000_000_008n);
      const r = await store.lease({
        userId: u,
        leaseId: 'L',
        mode: 'open',
        need: 1n,
        grow: 10n ** 16n,
        give: 0n,
        ttlMs: 60_000,
        outboxMax: 0,
      });
      t.same(r, { status: 'ok', granted: 1_000_000_000_000_001n });
      await settle(store, u, 'a', 123_456_789_012_345n, { leaseId: 'L' });
      t.same(
        await store.balance(u),
        { balance: 7_876_543_210_987_663n, reserved: 876_543_210_987_656n },
        'to the nano: no exponent on the way',
      );
    });

    t.test('getCached/setCached with a TTL, deleteCached', async (t) => {
      const { store, peer } = await impl.open(t);
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
    await dropRedisPrefix(p1);
    await dropRedisPrefix(p2);
  });
  const u = user();
  await prime(a, u, 10n);
  t.equal(await b.balance(u), null);
  const got: string[] = [];
  await b.subscribe('ch', (m) => got.push(m));
  await a.publish('ch', 'x');
  await b.publish('ch', 'mine');
  await waitFor(() => got.length > 0, 2000);
  await sleep(50);
  t.same(got, ['mine'], 'another prefix hears nothing, its own prefix does');
});

t.test('Redis: a settled reservation leaves no hold behind; its id is remembered by period', async (t) => {
  const prefix = testRedisPrefix();
  const store = new RedisHotStore(REDIS_URL, prefix);
  const r = new Redis(REDIS_URL);
  t.teardown(async () => {
    await store.close();
    r.disconnect();
    await dropRedisPrefix(prefix);
  });
  const u = user();
  await prime(store, u, 1_000_000n);
  for (let i = 0; i < 20; i++) await reserve(store, u, `r${i}`, 1_000n);
  await Promise.all(Array.from({ length: 20 }, (_, i) => settle(store, u, `r${i}`, 10n)));
  const base = new RedisLayout(prefix).userBase(u);
  t.equal(await r.hlen(`${base}:res`), 0, 'no entry per settled request in the holds');
  t.equal(await r.zcard(`${base}:resx`), 0, 'nor in their expiry index');
  t.equal(await r.exists(`${base}:kheld`), 0, 'a key without a cap has no held count');
  const done = await r.keys(`${base}:settled:*`);
  t.ok(
    done.length >= 1 && done.length <= 2,
    'the ids are in the hash of their period (two if the period turned meanwhile)',
  );
  const entries = new Map<string, string>();
  for (const k of done) {
    for (const [id, eid] of Object.entries(await r.hgetall(k))) entries.set(id, eid);
    const n = Number(k.slice(k.lastIndexOf(':') + 1));
    t.equal(await r.pexpiretime(k), (n + 2) * SETTLED_MEMORY_MS, 'the hash expires two periods after its own began');
  }
  t.equal(entries.size, 20);
  const inOutbox = new Map((await readAll(store)).map((e) => [e.record.settleId, e.id]));
  t.strictSame(entries, inOutbox, 'each id with the outbox entry its settle wrote');
  t.strictSame(
    await settle(store, u, 'r7', 10n),
    { duplicate: true, entryId: inOutbox.get('r7') },
    'a repeat is found there',
  );
  // A marker left by an earlier version is still a settled reservation, and is swept like one.
  await r.hset(`${base}:res`, 'old', 'settled');
  t.same(await settle(store, u, 'old', 10n), { duplicate: true });
  t.same(await store.balance(u), { balance: 999_800n, reserved: 0n });
});

t.test('memory: a settled id is remembered for its period and the next, then let go, as Redis keeps it', async (t) => {
  // The clock the store times by, moved by the test: the end of a period, then past it.
  let now = 100 * SETTLED_MEMORY_MS + SETTLED_MEMORY_MS - 5;
  const store = new MemoryHotStore({ now: () => now });
  t.teardown(() => store.close());
  const u = user();
  await prime(store, u, 1_000_000n);
  await reserve(store, u, 'a', 1_000n);
  const first = await settle(store, u, 'a', 10n);
  t.equal(first.duplicate, false);
  t.same(await store.balance(u), { balance: 999_990n, reserved: 0n }, 'charged once, nothing left held');
  now += 10; // the next period
  t.strictSame(
    await settle(store, u, 'a', 10n),
    { duplicate: true, entryId: first.entryId },
    "a repeat in the next period is found in its first settle's period",
  );
  // Many settles in a period leave nothing to sweep through: the holds in flight are the only ones.
  for (let i = 0; i < 1_000; i++) {
    await reserve(store, u, `b${i}`, 100n);
    await settle(store, u, `b${i}`, 1n);
  }
  t.same(await store.balance(u), { balance: 998_990n, reserved: 0n });
  now = 102 * SETTLED_MEMORY_MS; // two periods after the first settle's began: its ids are let go
  const late = await settle(store, u, 'a', 10n);
  t.equal(late.duplicate, false, "past Redis' two periods a repeat is no longer known (settle.lua's expiry)");
  t.strictSame(
    await settle(store, u, 'b7', 1n),
    { duplicate: true, entryId: (await readAll(store)).find((e) => e.record.settleId === 'b7')?.id },
    'the last period still is',
  );
});

t.test('memory: cached values and counters past their time are let go, as Redis expires its keys', async (t) => {
  let now = 1_000_000;
  const store = new MemoryHotStore({ now: () => now });
  t.teardown(() => store.close());
  const held = () => {
    const inside = (store as unknown as { shared: { cache: Map<string, unknown>; hits: Map<string, unknown> } }).shared;
    return { cache: inside.cache.size, hits: inside.hits.size };
  };
  // A shared key cache of every key met in ten minutes, and a counter each: never read again.
  for (let i = 0; i < 25_000; i++) {
    await store.setCached(`key:old${i}`, 'identity', 60_000);
    await store.hit(`rpm:old${i}`, 60);
  }
  t.same(held(), { cache: 25_000, hits: 25_000 }, 'alive: every one kept');
  now += 61_000;
  for (let i = 0; i < 25_000; i++) {
    await store.setCached(`key:new${i}`, 'identity', 60_000);
    await store.hit(`rpm:new${i}`, 60);
  }
  t.same(held(), { cache: 25_000, hits: 25_000 }, 'the expired ones are gone, without a read of each');
  t.equal(await store.getCached('key:new7'), 'identity', 'the live ones stay');
  t.same(await store.hit('rpm:new7', 60), { count: 2, ttlS: 60 });
});

t.test('Redis: reservation throughput (one connection, pipelined)', async (t) => {
  const prefix = testRedisPrefix();
  const store = new RedisHotStore(REDIS_URL, prefix);
  t.teardown(async () => {
    await store.close();
    await dropRedisPrefix(prefix);
  });
  const users = Array.from({ length: 100 }, user);
  await Promise.all(users.map((u) => prime(store, u, 1_000_000_000n)));
  const n = 20_000;
  const started = performance.now();
  let done = 0;
  // 200 in flight at a time, as a busy gateway would have.
  await Promise.all(
    Array.from({ length: 200 }, async (_, w) => {
      for (let i = w; i < n; i += 200) {
        const u = users[i % users.length];
        const r = await reserve(store, u, `r${i}`, 1_000n);
        if (r.status === 'ok') done++;
      }
    }),
  );
  const s = (performance.now() - started) / 1000;
  t.equal(done, n);
  t.comment(`Redis reserve(): ${n} calls, 200 in flight, in ${s.toFixed(2)} s = ${Math.round(n / s)}/s`);
});

t.test('Redis: the records of a writer that stopped are claimed by another', async (t) => {
  const prefix = testRedisPrefix();
  const store = new RedisHotStore(REDIS_URL, prefix);
  t.teardown(async () => {
    await store.close();
    await dropRedisPrefix(prefix);
  });
  const u = user();
  await prime(store, u, 1_000n);
  await settle(store, u, 'a', 1n);
  await settle(store, u, 'b', 2n);
  t.equal((await store.readOutbox('dead', 10, 10)).length, 2, 'read by a writer that then dies');
  await store.heartbeat('alive', 5_000);
  await store.heartbeat('dead', 50);
  t.equal(await store.claimAbandoned('alive'), 0, 'not while its heartbeat lives');
  await sleep(120);
  t.equal(await store.claimAbandoned('alive'), 2, 'claimed once the heartbeat expired');
  t.same(
    (await store.readOutbox('alive', 10, 10)).map((e) => e.record.settleId),
    ['a', 'b'],
    'and delivered to the claimer',
  );
  t.equal(await store.claimAbandoned('alive'), 0, 'the dead consumer is gone');
});

t.test('Redis: charges settled again after Redis lost data', async (t) => {
  const prefix = testRedisPrefix();
  const store = new RedisHotStore(REDIS_URL, prefix);
  t.teardown(async () => {
    await store.close();
    await dropRedisPrefix(prefix);
  });
  const inPostgres = new Set<string>();
  let replayed = 0;
  await store.startWatching({
    intervalMs: 60_000,
    committed: async (ids) => new Set(ids.filter((id) => inPostgres.has(id))),
    onReplay: (n) => (replayed += n),
  });
  const u = user();
  await prime(store, u, 1_000n);
  await reserve(store, u, 'a', 100n);
  await settle(store, u, 'a', 60n);
  await settle(store, u, 'b', 5n);
  await settle(store, u, 'c', 7n);
  const [a] = await store.readOutbox('w', 1, 10);
  inPostgres.add('a'); // a writer committed 'a' and acknowledged it
  await ack(store, [a], 'inserted', 60n);
  t.equal(store.retainedCount, 3, 'kept until the watcher sees them acknowledged');
  await store.watch();
  t.equal(store.retainedCount, 2, 'the acknowledged one is forgotten');
  t.equal(replayed, 0, 'nothing lost, nothing replayed');

  const [b] = await store.readOutbox('w', 1, 10);
  inPostgres.add('b'); // committed, but the data (and the acknowledgement) went before the ack
  void b;
  await dropRedisPrefix(prefix); // what FLUSHALL, or a restart without AOF, does
  await store.watch();
  t.equal(replayed, 1, 'only what is neither in the outbox nor in Postgres is settled again');
  const entries = await store.readOutbox('w2', 10, 10);
  t.same(
    entries.map((e) => e.record.settleId),
    ['c'],
    'back in the outbox',
  );
  t.equal(entries[0].generation, '', 'no account was loaded: the acknowledgement corrects the next one');
  await store.watch();
  t.equal(replayed, 1, 'a second round in the same instance replays nothing');
});

t.test('Redis: a settle repeated after its answer was lost is kept for the watch, and survives a flush', async (t) => {
  const prefix = testRedisPrefix();
  const store = new RedisHotStore(REDIS_URL, prefix);
  // The first call's process view: its answer never reached `store` (a timeout), as if another
  // connection had sent it.
  const lostAnswer = new RedisHotStore(REDIS_URL, prefix);
  t.teardown(async () => {
    await store.close();
    await lostAnswer.close();
    await dropRedisPrefix(prefix);
  });
  let replayed = 0;
  await store.startWatching({ intervalMs: 60_000, committed: async () => new Set(), onReplay: (n) => (replayed += n) });
  const u = user();
  await prime(store, u, 1_000n);
  await reserve(store, u, 'timed-out', 100n);
  const first = await settle(lostAnswer, u, 'timed-out', 60n);
  const again = await settle(store, u, 'timed-out', 60n);
  t.strictSame(again, { duplicate: true, entryId: first.entryId }, 'the retry is a repeat naming the first entry');
  t.equal(store.retainedCount, 1, 'and the retrying process keeps that entry');
  await dropRedisPrefix(prefix); // the data goes before a writer drained the entry
  await store.watch();
  t.equal(replayed, 1, 'the charge is settled again');
  t.same(
    (await store.readOutbox('w', 10, 10)).map((e) => e.record.settleId),
    ['timed-out'],
    'back in the outbox',
  );
});
