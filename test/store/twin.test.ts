// The money rules are written twice: as Lua for Redis (src/store/lua/) and as TypeScript for the
// in-process store of the embedded default (src/store/hot-memory.ts). The contract suite
// (test/foundation/hot-contract.test.ts) checks each against the answers it expects; this file
// checks the two against each other. Seeded random walks of holds, leases, settles, credits,
// loads, forgets and the writer's commits run on both stores step by step, and every answer,
// balance and account snapshot must be the same. A change to one store's rule that the other
// does not make turns this red, whatever the contract suite happens to assert.

import t from 'tap';
import { randomUUID } from 'node:crypto';
import type { AckItem, HotStore, OutboxEntry } from '../../src/store/hot.js';
import { MemoryHotStore } from '../../src/store/hot-memory.js';
import { RedisHotStore } from '../../src/store/hot-redis.js';
import { REDIS_URL, testRedisPrefix } from '../helpers/stores.js';
import { usageRecord } from '../helpers/usage-record.js';

/** mulberry32: a small seeded generator, so that a failing walk can be replayed from its seed. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), a | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return {
    int: (n: number) => Math.floor(next() * n),
    pick<T>(xs: readonly T[]): T {
      return xs[Math.floor(next() * xs.length)];
    },
    /** Amounts on a coarse grid, so that a hold meets exactly what is available often. */
    amount: (max: number) => BigInt(Math.floor(next() * (max / 100 + 1)) * 100),
  };
}

interface Account {
  id: string;
  /** Postgres as the writer leaves it: the balance and the committed charges. */
  pgBalance: bigint;
  pgCharged: bigint;
  /** Credits committed (users.credit_seq), and those committed that the store has not heard of yet. */
  pgCredits: bigint;
  unheard: { amount: bigint; seq: bigint }[];
  /** Cap changes committed (users.limits_seq). */
  pgLimits: bigint;
  keys: { id: string; cap?: { limit: bigint; field: string } }[];
  /** Reservation ids held (with their key), leases open. */
  holds: { id: string; key: string }[];
  leases: string[];
  /** Ids already settled, to settle again (a repeat must charge nothing). */
  settled: string[];
}

const record = (userId: string, keyId: string, settleId: string, cost: bigint) =>
  usageRecord(userId, settleId, cost, { keyId, createdAt: new Date(0) });

/** One text per value, keys in order, so that two answers compare as text. */
function text(value: unknown): string {
  return JSON.stringify(value, (_k, v) => {
    if (typeof v === 'bigint') return `${v}n`;
    if (v && typeof v === 'object' && !Array.isArray(v))
      return Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1)));
    return v;
  });
}

/** What must agree: the answers with the store's own ids (entry ids, generations) left out. */
function comparable(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(comparable);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // Redis answers a release's missing entry as '', the memory store leaves it out.
    if (k === 'entryId') {
      if (v) out[k] = true;
    } else out[k] = comparable(v);
  }
  return out;
}

const STEPS = 600;
const SEEDS = [1, 2, 3, 4];

for (const seed of SEEDS) {
  t.test(`seed ${seed}: ${STEPS} steps on both stores give the same answers`, async (t) => {
    const memory = new MemoryHotStore();
    const redis = new RedisHotStore(REDIS_URL, testRedisPrefix(t));
    t.teardown(async () => {
      await memory.close();
      await redis.close();
    });
    const stores: [string, HotStore][] = [
      ['memory', memory],
      ['redis', redis],
    ];
    const rnd = random(seed);
    const run = randomUUID().slice(0, 8);
    const accounts: Account[] = Array.from({ length: 3 }, (_, i) => ({
      id: `${run}-u${i}`,
      pgBalance: rnd.amount(5_000),
      pgCharged: rnd.amount(2_000),
      pgCredits: 0n,
      unheard: [],
      pgLimits: 0n,
      keys: [
        { id: `${run}-u${i}-k0` },
        { id: `${run}-u${i}-k1`, cap: { limit: rnd.amount(3_000), field: `ks:${run}-u${i}-k1:2026-12` } },
      ],
      holds: [],
      leases: [],
      settled: [],
    }));
    let serial = 0;
    const counts: Record<string, number> = {};
    let differences = 0;

    /** One step on both stores, in turn; their answers must agree. `call` draws nothing at random. */
    async function both<T>(what: string, call: (s: HotStore) => Promise<T>): Promise<T> {
      counts[what] = (counts[what] ?? 0) + 1;
      const answers: T[] = [];
      for (const [, store] of stores) answers.push(await call(store));
      const [a, b] = answers.map(comparable);
      if (text(a) !== text(b)) {
        differences++;
        t.strictSame(b, a, `step ${serial} ${what}: redis answers as memory does`);
      }
      return answers[0];
    }

    /** The writer: read what both outboxes hold, commit it to the model of Postgres, acknowledge. */
    async function commit() {
      const read: OutboxEntry[][] = [];
      for (const [, store] of stores) read.push(await store.readOutbox('w', 1000, 5));
      const bySettle = (es: OutboxEntry[]) => new Map(es.map((e) => [e.record.settleId, e] as const));
      const [mem, red] = read.map(bySettle);
      t.same([...red.keys()].sort(), [...mem.keys()].sort(), `step ${serial} the same records wait in both outboxes`);
      const plan: { settleId: string; kind: AckItem['kind']; chargedAfter: bigint }[] = [];
      for (const e of mem.values()) {
        const acct = accounts.find((a) => a.id === e.record.userId)!;
        // Now and then the same charge was committed already (by another entry of it): a duplicate.
        const kind: AckItem['kind'] = rnd.int(10) === 0 ? 'duplicate' : 'inserted';
        if (kind === 'inserted') {
          acct.pgBalance -= e.record.costNano;
          acct.pgCharged += e.record.costNano;
        }
        plan.push({ settleId: e.record.settleId, kind, chargedAfter: acct.pgCharged });
      }
      for (const [i, [, store]] of stores.entries()) {
        const entries = [mem, red][i];
        await store.ackOutbox(
          plan.map((p) => ({ entry: entries.get(p.settleId)!, kind: p.kind, chargedAfter: p.chargedAfter })),
        );
      }
      for (const [name, es] of [
        ['memory', mem],
        ['redis', red],
      ] as const)
        for (const e of es.values())
          t.equal(
            e.generation === '',
            mem.get(e.record.settleId)!.generation === '',
            `${name}: generation known alike`,
          );
    }

    for (serial = 0; serial < STEPS; serial++) {
      const a = rnd.pick(accounts);
      const key = rnd.pick(a.keys);
      const op = rnd.int(100);
      if (op < 8) {
        // Now and then a snapshot read before the last cap change: refused by both.
        const limitsSeq = a.pgLimits > 0n && rnd.int(2) === 0 ? a.pgLimits - 1n : a.pgLimits;
        const loaded = await both('prime', (s) =>
          s.primeBalance(a.id, {
            balance: a.pgBalance,
            charged: a.pgCharged,
            creditSeq: a.pgCredits,
            limitsSeq,
            keySpend: Object.fromEntries(a.keys.flatMap((k) => (k.cap ? [[k.cap.field, 0n]] : []))),
          }),
        );
        if (loaded === 'stale') counts['prime refused as stale'] = (counts['prime refused as stale'] ?? 0) + 1;
      } else if (op < 35) {
        const id = `r${serial}`;
        const req = {
          userId: a.id,
          // Now and then a hold already made: it is held once.
          reservationId: rnd.int(20) === 0 && a.holds.length ? a.holds[0].id : id,
          amount: rnd.amount(1_500),
          ttlMs: 600_000,
          keyId: key.id,
          rpmLimit: 0,
          spend: key.cap,
          outboxMax: 0,
        };
        const r = await both('reserve', (s) => s.reserve(req));
        if (r.status === 'ok' && !a.holds.some((h) => h.id === id)) a.holds.push({ id, key: key.id });
      } else if (op < 60 && a.holds.length) {
        const hold = a.holds.splice(rnd.int(a.holds.length), 1)[0];
        const k = a.keys.find((x) => x.id === hold.key)!;
        const cost = rnd.int(6) === 0 ? 0n : rnd.amount(1_800);
        const req = {
          userId: a.id,
          reservationId: hold.id,
          cost,
          keyId: k.id,
          spendField: k.cap?.field,
          // A release (nothing used) records nothing; a zero-cost answer is still recorded.
          record: cost === 0n && rnd.int(2) === 0 ? undefined : record(a.id, k.id, hold.id, cost),
        };
        await both('settle', (s) => s.settle(req));
        a.settled.push(hold.id);
      } else if (op < 63 && a.settled.length) {
        const id = rnd.pick(a.settled);
        await both('settle again', (s) =>
          s.settle({
            userId: a.id,
            reservationId: id,
            cost: 100n,
            keyId: key.id,
            record: record(a.id, key.id, id, 100n),
          }),
        );
      } else if (op < 72) {
        const extend = a.leases.length > 0 && rnd.int(2) === 0;
        const leaseId = extend ? rnd.pick(a.leases) : `l${serial}`;
        const req = {
          userId: a.id,
          leaseId,
          mode: extend ? ('extend' as const) : ('open' as const),
          need: rnd.amount(500),
          grow: rnd.amount(3_000),
          give: 0n,
          ttlMs: 600_000,
          outboxMax: 0,
        };
        const r = await both('lease', (s) => s.lease(req));
        if (r.status === 'ok' && !extend) a.leases.push(leaseId);
      } else if (op < 80 && a.leases.length) {
        const leaseId = rnd.pick(a.leases);
        const id = `d${serial}`;
        const cost = rnd.amount(1_000);
        await both('settle from a lease', (s) =>
          s.settle({
            userId: a.id,
            reservationId: id,
            leaseId,
            cost,
            keyId: key.id,
            record: record(a.id, key.id, id, cost),
          }),
        );
        a.settled.push(id);
      } else if (op < 84 && a.leases.length) {
        const leaseId = a.leases.splice(rnd.int(a.leases.length), 1)[0];
        const give = rnd.amount(4_000);
        await both('lease close', (s) =>
          s.lease({ userId: a.id, leaseId, mode: 'close', need: 0n, grow: 0n, give, ttlMs: 600_000, outboxMax: 0 }),
        );
      } else if (op < 87) {
        // A credit commits; the store hears of it now, or a few steps later (loads may come between).
        const amount = rnd.amount(2_000);
        a.pgBalance += amount;
        a.unheard.push({ amount, seq: ++a.pgCredits });
        while (a.unheard.length && rnd.int(2) === 0) {
          const c = a.unheard.splice(rnd.int(a.unheard.length), 1)[0];
          await both('credit', (s) => s.credit(a.id, c.amount, c.seq));
        }
      } else if (op < 89) {
        // Now and then a cap's change (numbered), else a plain forget.
        const limitsSeq = rnd.int(2) === 0 ? ++a.pgLimits : undefined;
        await both('forget', (s) => s.forgetBalance(a.id, limitsSeq));
      } else if (op < 91) {
        await both('gate', (s) => s.gate(a.id, key.id, 0));
      } else if (op < 96) {
        await commit();
      } else {
        await both('balance', (s) => s.balance(a.id));
      }
      // TWIN_TRACE=1 prints each step's account on both stores, to find where a walk parted.
      if (process.env.TWIN_TRACE) {
        const bs = [];
        for (const [, st] of stores) bs.push(text(comparable(await st.balance(a.id))));
        console.error(serial, op, a.id.slice(-2), bs[0], bs[1], bs[0] === bs[1] ? '' : 'DIFF');
      }
      if (serial % 50 === 49) {
        const mine = (snap: Awaited<ReturnType<HotStore['snapshotAccounts']>>) =>
          snap.filter((x) => accounts.some((a) => a.id === x.userId)).sort((x, y) => (x.userId < y.userId ? -1 : 1));
        await both('snapshot', async (s) => mine(await s.snapshotAccounts()));
      }
    }
    await commit();
    for (const a of accounts) for (const c of a.unheard) await both('credit', (s) => s.credit(a.id, c.amount, c.seq));
    for (const a of accounts) await both('balance at the end', (s) => s.balance(a.id));
    t.equal(differences, 0, 'no step answered differently');
    // The walk must reach every kind of step, or it proves less than it says.
    for (const what of [
      'prime',
      'prime refused as stale',
      'reserve',
      'settle',
      'settle again',
      'lease',
      'settle from a lease',
      'lease close',
      'credit',
      'forget',
      'gate',
      'snapshot',
    ])
      t.ok((counts[what] ?? 0) > 0, `${what}: ${counts[what] ?? 0} steps`);
  });
}
