// The ledger over real Postgres and Redis: accounts primed from a Postgres snapshot, charges
// settled into the outbox and written by the outbox writer, and the invariants holding to the
// nano-dollar in Postgres and in the hot store alike (reconcile compares both).

import t from 'tap';
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { createKey, LAST_USED_SQL } from '../../src/accounts/keys.js';
import { createVerifiedUser, creditUser } from '../../src/accounts/users.js';
import { NO_LIMITS, spendField, type KeyLimits } from '../../src/billing/key-limits.js';
import { Ledger, type Payer } from '../../src/billing/ledger.js';
import { commitEntries, OutboxWriter } from '../../src/billing/outbox-writer.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { GatewayError } from '../../src/errors.js';
import type { OutboxEntry, OutboxRecord } from '../../src/store/hot.js';
import { RedisHotStore } from '../../src/store/hot-redis.js';
import { testStores } from '../helpers/stores.js';
import { usageRecord as record } from '../helpers/usage-record.js';

const silent = pino({ level: 'silent' });
type Stores = Awaited<ReturnType<typeof testStores>>;

const payer = (userId: string, keyId: string = randomUUID(), limits: KeyLimits = NO_LIMITS): Payer => ({
  userId,
  keyId,
  limits,
});

const ledgerOf = (s: Stores) => new Ledger(s.sql, s.hot, { ttlMs: 60_000, outboxMax: 0 });
const writerOf = (s: Stores, batchMax = 100) => new OutboxWriter(s.sql, s.hot, silent, { batchMax, pauseMs: 0 });

async function pgBalance(s: Stores, userId: string): Promise<bigint> {
  const [row] = await s.sql<{ balance_nano: bigint }[]>`SELECT balance_nano FROM users WHERE id = ${userId}`;
  return row.balance_nano;
}

const credit = (s: Stores, userId: string, nano: bigint) =>
  creditUser(s.sql, s.hot, userId, nano, { method: 'operator', amount: String(nano), currency: 'USD' });

/** Reserve, then settle `cost` with its record. */
async function charge(ledger: Ledger, p: Payer, hold: bigint, cost: bigint, extra: Partial<OutboxRecord> = {}) {
  const res = await ledger.reserve(p, hold);
  return ledger.settle(res, cost, record(p.userId, res.id, cost, { keyId: p.keyId, overrun: cost > hold, ...extra }));
}

t.test('reserve primes from Postgres and refuses with insufficient_balance', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'a@example.test');
  await credit(s, user.id, 1_000_000_000n);
  t.equal(await s.hot.balance(user.id), null, 'not loaded before the first request');
  const ledger = ledgerOf(s);
  const p = payer(user.id);

  const r1 = await ledger.reserve(p, 400_000_000n);
  t.equal(r1.amount, 400_000_000n);
  t.same(await s.hot.balance(user.id), { balance: 1_000_000_000n, reserved: 400_000_000n }, 'primed from Postgres');

  const caught = await ledger.reserve(p, 600_000_001n).then(
    () => null,
    (err: unknown) => err,
  );
  t.type(caught, GatewayError);
  t.equal((caught as GatewayError).kind, 'insufficient_balance');
  t.equal((caught as GatewayError).status, 402);
  t.match((caught as GatewayError).message, /\$0\.600000001.*\$0\.60 is available/);
  t.same(
    await ledger.balance(user.id),
    { balance: 1_000_000_000n, reserved: 400_000_000n, available: 600_000_000n },
    'a refusal holds nothing',
  );

  const r2 = await ledger.reserve(p, 600_000_000n);
  t.equal(await ledger.settle(r2, 100n, record(user.id, r2.id, 100n)), 100n);
  t.equal(await ledger.settle(r2, 100n, record(user.id, r2.id, 100n)), 0n, 'settling twice takes nothing');
  await ledger.release(r1);
  t.same(await ledger.balance(user.id), { balance: 999_999_900n, reserved: 0n, available: 999_999_900n });
  t.equal(await s.hot.outboxLength(), 1, 'one record: the release wrote none');

  const poor = await createVerifiedUser(s.sql, 'poor@example.test');
  const refused = await ledger.reserve(payer(poor.id), 1n).then(
    () => null,
    (err: unknown) => err,
  );
  t.equal((refused as GatewayError | null)?.kind, 'insufficient_balance', 'no balance: refused, not errored');
});

t.test('charges through the outbox reconcile to the nano-dollar, overruns included', async (t) => {
  const s = await testStores(t);
  const ledger = ledgerOf(s);
  const writer = writerOf(s, 7); // small batches: many transactions
  const users = await Promise.all(['u1', 'u2', 'u3'].map((n) => createVerifiedUser(s.sql, `${n}@example.test`)));
  const keys = await Promise.all(users.map((u) => createKey(s.sql, u.id)));
  await credit(s, users[0].id, 5_000_000_007n);
  await credit(s, users[1].id, 123_456_789n);
  await credit(s, users[1].id, 1n);
  await credit(s, users[2].id, 10_000n);

  const charged = new Map<string, bigint>();
  let overrunBy = 0n;
  writer.start();
  await Promise.all(
    Array.from({ length: 120 }, async (_, i) => {
      const u = users[i % 3];
      // User 3 is served past its hold (an upstream that ignored the cap): charged in full.
      const hold = u === users[2] ? 1_000n : 40_000_000n;
      const cost = u === users[2] ? 4_000n : BigInt(1_000_003 * ((i % 30) + 1));
      try {
        const took = await charge(ledger, payer(u.id, keys[i % 3].id), hold, cost);
        charged.set(u.id, (charged.get(u.id) ?? 0n) + took);
        if (cost > hold) overrunBy += cost - hold;
      } catch (err) {
        if ((err as GatewayError).kind !== 'insufficient_balance') throw err;
      }
    }),
  );
  await writer.drained();
  await writer.stop();

  const report = await reconcile(s.sql, s.hot);
  t.same(report.mismatches, [], 'Postgres reconciles');
  t.same(report.hotMismatches, [], 'and the hot store with it');
  t.equal(report.hotAccounts, 3);
  t.equal(report.ok, true);
  for (const [i, u] of users.entries()) {
    const hot = await s.hot.balance(u.id);
    t.equal(await pgBalance(s, u.id), hot?.balance, `user ${i + 1}: Postgres balance = hot balance`);
    t.equal(hot?.reserved, 0n, 'nothing left reserved');
    const [{ sum }] = await s.sql<
      { sum: bigint }[]
    >`SELECT coalesce(sum(cost_nano), 0)::bigint AS sum FROM usage_records WHERE user_id = ${u.id}`;
    t.equal(sum, charged.get(u.id) ?? 0n, 'the records hold every charge');
  }
  const u3 = await pgBalance(s, users[2].id);
  const u3Charges = charged.get(users[2].id)! / 4_000n;
  t.equal(u3, 10_000n - charged.get(users[2].id)!, 'user 3: every charge taken in full');
  t.ok(u3 < 0n, 'below zero');
  t.ok(u3 >= -overrunBy, `but only by what went past the holds (${u3} ≥ −${overrunBy})`);
  t.ok(u3Charges <= 10n, `no more answers than the balance could hold (${u3Charges})`);
  const [{ overruns }] = await s.sql<
    { overruns: number }[]
  >`SELECT count(*)::int AS overruns FROM usage_records WHERE overrun`;
  t.equal(BigInt(overruns), u3Charges, 'each overrun is marked');
  const [{ used }] = await s.sql<
    { used: number }[]
  >`SELECT count(*)::int AS used FROM api_keys k WHERE ${s.sql.unsafe(LAST_USED_SQL)} IS NOT NULL`;
  t.equal(used, 3, 'keys carry their last use');
});

t.test('a crash between commit and acknowledgement writes nothing twice', async (t) => {
  const s = await testStores(t);
  const ledger = ledgerOf(s);
  const user = await createVerifiedUser(s.sql, 'crash@example.test');
  await credit(s, user.id, 1_000_000n);
  for (let i = 0; i < 5; i++) await charge(ledger, payer(user.id), 1_000n, BigInt(100 + i));
  const entries = await s.hot.readOutbox('crashed', 10, 10);
  t.equal(entries.length, 5);
  const first = await commitEntries(s.sql, entries);
  t.same(
    first.map((i) => i.kind),
    ['inserted', 'inserted', 'inserted', 'inserted', 'inserted'],
  );
  // The writer dies here, before acknowledging. Another one claims and commits again.
  const again = await commitEntries(s.sql, entries);
  t.same(
    again.map((i) => i.kind),
    ['redelivered', 'redelivered', 'redelivered', 'redelivered', 'redelivered'],
    'recognised as the same entries',
  );
  t.same(
    again.map((i) => i.chargedAfter),
    first.map((i) => i.chargedAfter),
    'with the charged totals of the first commit',
  );
  await s.hot.ackOutbox(again);
  const [{ n }] = await s.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM usage_records`;
  t.equal(n, 5, 'five rows, not ten');
  t.equal(await pgBalance(s, user.id), 1_000_000n - 510n);
  t.same((await s.hot.balance(user.id))?.balance, 1_000_000n - 510n);
  t.equal((await reconcile(s.sql, s.hot)).ok, true);
});

t.test('a committed batch is not kept alive by the Postgres connection that wrote it', async (t) => {
  // postgres.js keeps a connection's last transaction result reachable until that connection's
  // next transaction; a writer that returned its batch from the transaction kept a batch per
  // pooled connection alive (thousands of records in a worker, all promoted to old space).
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const s = await testStores(t);
  const ledger = ledgerOf(s);
  const user = await createVerifiedUser(s.sql, 'kept@example.test');
  await credit(s, user.id, 1_000_000n);
  for (let i = 0; i < 3; i++) await charge(ledger, payer(user.id), 1_000n, 100n);
  let entries: OutboxEntry[] | undefined = await s.hot.readOutbox('kept', 10, 10);
  const refs = entries.map((e) => new WeakRef(e.record));
  const items = await commitEntries(s.sql, entries);
  t.same(
    items.map((i) => i.kind),
    ['inserted', 'inserted', 'inserted'],
  );
  await s.hot.ackOutbox(items);
  entries = undefined;
  items.length = 0;
  // WeakRefs are cleared only after the job that made them; a later macrotask is past it.
  await new Promise((r) => setTimeout(r, 0));
  gc();
  t.equal(refs.filter((r) => r.deref() !== undefined).length, 0, 'no record of the batch survives a full collection');
  t.equal((await reconcile(s.sql, s.hot)).ok, true);
});

t.test('the same charge appended twice is committed once and refunded once in the hot store', async (t) => {
  const s = await testStores(t);
  const ledger = ledgerOf(s);
  const user = await createVerifiedUser(s.sql, 'twice@example.test');
  await credit(s, user.id, 1_000n);
  const res = await ledger.reserve(payer(user.id), 500n);
  const rec = record(user.id, res.id, 300n);
  // A settle whose answer was lost (a timeout), retried after the settled-id memory expired.
  await s.hot.settle({ userId: user.id, reservationId: res.id, cost: 300n, keyId: res.keyId, record: rec });
  await s.hot.settle({
    userId: user.id,
    reservationId: `${res.id}`.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
    cost: 300n,
    keyId: res.keyId,
    record: rec,
  });
  t.equal((await s.hot.balance(user.id))?.balance, 400n, 'charged twice in the hot store for now');
  const writer = writerOf(s);
  writer.start();
  await writer.drained();
  await writer.stop();
  t.equal((await s.hot.balance(user.id))?.balance, 700n, 'the duplicate is given back on acknowledgement');
  t.equal(await pgBalance(s, user.id), 700n, 'one charge in Postgres');
  t.same((await reconcile(s.sql, s.hot)).hotMismatches, []);
});

t.test('charges settled while no account was loaded reach the account exactly once', async (t) => {
  const s = await testStores(t);
  const ledger = ledgerOf(s);
  const user = await createVerifiedUser(s.sql, 'late@example.test');
  await credit(s, user.id, 10_000n);
  const p = payer(user.id);
  await ledger.balance(user.id);
  const r1 = await ledger.reserve(p, 1_000n);
  const r2 = await ledger.reserve(p, 1_000n);
  // The account is dropped (a flush, a limit change) while two requests are in flight.
  await s.hot.forgetBalance(user.id);
  await ledger.settle(r1, 400n, record(user.id, r1.id, 400n));
  await ledger.settle(r2, 300n, record(user.id, r2.id, 300n));
  // One of them reaches Postgres before the account is loaded again, the other after.
  const [e1] = await s.hot.readOutbox('w', 1, 10);
  await s.hot.ackOutbox(await commitEntries(s.sql, [e1]));
  await ledger.balance(user.id); // primed: the snapshot holds the first charge only
  const writer = writerOf(s);
  writer.start();
  await writer.drained();
  await writer.stop();
  t.equal((await s.hot.balance(user.id))?.balance, 9_300n, 'both charges, each once');
  t.equal(await pgBalance(s, user.id), 9_300n);
  t.same((await reconcile(s.sql, s.hot)).hotMismatches, []);
});

t.test('a capped key: its period spend is loaded from Postgres with the account', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'capped@example.test');
  await credit(s, user.id, 1_000_000n);
  const key = await createKey(s.sql, user.id, 'capped');
  await s.sql`UPDATE api_keys SET spend_limit_nano = 1000, spend_limit_period = 'day' WHERE id = ${key.id}`;
  const limits: KeyLimits = { rpm: null, spendNano: 1_000n, spendPeriod: 'day' };
  const ledger = ledgerOf(s);
  const writer = writerOf(s);
  writer.start();
  await charge(ledger, payer(user.id, key.id, limits), 500n, 700n);
  await writer.drained();
  await s.hot.forgetBalance(user.id); // loaded again from Postgres
  const err = await ledger.reserve(payer(user.id, key.id, limits), 301n).then(
    () => null,
    (e: unknown) => e,
  );
  t.equal((err as GatewayError).kind, 'rate_limit', 'spent 700 today: 301 more is over the 1000 cap');
  t.equal((err as GatewayError).code, 'key_spend_limit');
  t.ok((err as GatewayError).retryAfter! > 0 && (err as GatewayError).retryAfter! <= 86_400, 'retry when the day ends');
  const ok = await ledger.reserve(payer(user.id, key.id, limits), 300n);
  await ledger.release(ok);
  await s.sql`UPDATE api_keys SET spend_limit_nano = 700, spend_limit_period = 'total' WHERE id = ${key.id}`;
  await s.hot.forgetBalance(user.id);
  const total = await ledger
    .reserve(payer(user.id, key.id, { rpm: null, spendNano: 700n, spendPeriod: 'total' }), 1n)
    .then(
      () => null,
      (e: unknown) => e,
    );
  t.equal((total as GatewayError).code, 'key_spend_limit', 'the lifetime spend is loaded too');
  t.equal((total as GatewayError).noRetry, true, 'a lifetime cap says not to retry');
  t.equal((total as GatewayError).retryAfter, undefined);
  t.equal(spendField(key.id, 'total', new Date()), `k:${key.id}:t`);
  // A record of 40 days ago: in the key's lifetime, not in its month. Spend is loaded from the
  // per-key daily totals the records keep (sql/029), not from the records.
  await s.sql`INSERT INTO usage_records (user_id, key_id, request_id, model, surface, stream, status, cost_nano, created_at)
    VALUES (${user.id}, ${key.id}, 'old', 'm', 'chat', false, 200, 5000, now() - interval '40 days')`;
  const capped = async (period: 'month' | 'total', cap: bigint, amount: bigint) => {
    await s.sql`UPDATE api_keys SET spend_limit_nano = ${cap.toString()}, spend_limit_period = ${period} WHERE id = ${key.id}`;
    await s.hot.forgetBalance(user.id);
    return ledger.reserve(payer(user.id, key.id, { rpm: null, spendNano: cap, spendPeriod: period }), amount).then(
      async (r) => {
        await ledger.release(r);
        return 'served';
      },
      (e: GatewayError) => e.code,
    );
  };
  t.equal(await capped('month', 1000n, 301n), 'key_spend_limit', 'this month: the 700 of today');
  t.equal(await capped('month', 1000n, 300n), 'served', 'not the 5000 of 40 days ago');
  t.equal(await capped('total', 5700n, 1n), 'key_spend_limit', 'all time: both');
  t.equal(await capped('total', 5701n, 1n), 'served');
  await writer.stop();
});

t.test('an unreachable hot store refuses with unavailable (503), not an internal error', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'down@example.test');
  const down = new RedisHotStore('redis://127.0.0.1:1', 'down:', { timeoutMs: 200 });
  t.teardown(() => down.close());
  const ledger = new Ledger(s.sql, down, { ttlMs: 60_000, outboxMax: 0 });
  const started = Date.now();
  const err = await ledger.reserve(payer(user.id), 1n).then(
    () => null,
    (e: unknown) => e,
  );
  t.type(err, GatewayError);
  t.equal((err as GatewayError).kind, 'unavailable');
  t.equal((err as GatewayError).status, 503);
  t.ok(Date.now() - started < 3000, 'quickly');
  // A delivered answer's charge waits for the store instead of being lost.
  const res = { id: randomUUID(), userId: user.id, keyId: 'k', limits: NO_LIMITS, amount: 10n, settled: false };
  t.equal(await ledger.settleEventually(res, 5n, record(user.id, res.id, 5n)), false);
  t.equal(ledger.pendingSettles, 1, 'kept for a retry');
  await ledger.stop();
});

t.test('a full outbox refuses new requests with 503', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'full@example.test');
  await credit(s, user.id, 1_000_000n);
  const ledger = new Ledger(s.sql, s.hot, { ttlMs: 60_000, outboxMax: 3 });
  for (let i = 0; i < 3; i++) await charge(ledger, payer(user.id), 10n, 1n);
  const err = await ledger.reserve(payer(user.id), 10n).then(
    () => null,
    (e: unknown) => e,
  );
  t.equal((err as GatewayError).kind, 'unavailable');
  t.match((err as GatewayError).message, /cannot record usage/);
  const writer = writerOf(s);
  writer.start();
  await writer.drained();
  await writer.stop();
  t.ok(await ledger.reserve(payer(user.id), 10n), 'accepted again once drained');
});

t.test('creditUser: deposit and balance in Postgres, then the loaded hot balance', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'c@example.test');
  const ledger = ledgerOf(s);
  await ledger.balance(user.id); // loads 0
  const r = await credit(s, user.id, 2_500n);
  t.equal(r.balance, 2_500n);
  t.same(await s.hot.balance(user.id), { balance: 2_500n, reserved: 0n }, 'the loaded hot balance follows');
  const [d] = await s.sql<
    { status: string; credit_nano: bigint }[]
  >`SELECT status, credit_nano FROM deposits WHERE id = ${r.depositId}`;
  t.same({ ...d }, { status: 'paid', credit_nano: 2_500n });
  t.equal((await reconcile(s.sql, s.hot)).ok, true);
});

t.test('reconcile counts once a charge committed whose acknowledgement has not run', async (t) => {
  const s = await testStores(t);
  const ledger = ledgerOf(s);
  const user = await createVerifiedUser(s.sql, 'unacked@example.test');
  await credit(s, user.id, 1_000_000n);
  for (let i = 0; i < 3; i++) await charge(ledger, payer(user.id), 1_000n, BigInt(200 + i));
  const entries = await s.hot.readOutbox('slow', 10, 10);
  t.equal(entries.length, 3);
  // Two committed, their writer not yet at its acknowledgement; the third still waiting.
  const items = await commitEntries(s.sql, entries.slice(0, 2));
  t.equal(await pgBalance(s, user.id), 1_000_000n - 401n);
  t.equal((await s.hot.balance(user.id))?.balance, 1_000_000n - 603n);
  let report = await reconcile(s.sql, s.hot);
  t.same(report.hotMismatches, [], 'the hot balance carries all three; Postgres two, the outbox the third');
  t.equal(report.ok, true);
  t.equal(report.outbox, 3);
  await s.hot.ackOutbox(items);
  report = await reconcile(s.sql, s.hot);
  t.same(report.hotMismatches, [], 'and after the acknowledgement');
  // A hot balance off by one is still caught while entries wait committed.
  await commitEntries(s.sql, entries.slice(2));
  await s.hot.credit(user.id, 1n, 1_000n);
  report = await reconcile(s.sql, s.hot);
  t.same(
    report.hotMismatches.map((m) => [m.expected, m.hot]),
    [[1_000_000n - 603n, 1_000_000n - 602n]],
    'a hot balance one more than Postgres allows',
  );
});

t.test('reconcile reports a tampered balance, in Postgres and in the hot store', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'other@example.test');
  await credit(s, user.id, 1_000n);
  const ledger = ledgerOf(s);
  await ledger.balance(user.id);
  await s.sql`UPDATE users SET balance_nano = balance_nano + 1 WHERE id = ${user.id}`;
  let report = await reconcile(s.sql, s.hot);
  t.equal(report.ok, false);
  t.same(
    report.mismatches.map((m) => ({
      email: m.email,
      balance: m.balance_nano,
      credits: m.credits_nano,
      charges: m.charges_nano,
    })),
    [{ email: 'other@example.test', balance: 1_001n, credits: 1_000n, charges: 0n }],
  );
  t.same(
    report.hotMismatches.map((m) => [m.expected, m.hot]),
    [[1_001n, 1_000n]],
    'the hot store disagrees with the tampered figure',
  );
  await s.sql`UPDATE users SET balance_nano = balance_nano - 1 WHERE id = ${user.id}`;
  await s.hot.credit(user.id, 7n, 1_000n);
  report = await reconcile(s.sql, s.hot);
  t.same(report.mismatches, []);
  t.same(
    report.hotMismatches.map((m) => [m.email, m.expected, m.hot]),
    [['other@example.test', 1_000n, 1_007n]],
    'a hot balance that grew is caught',
  );
});

t.test('reconcile adds only the records since its checkpoint; --full sums them all again', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'inc@example.test');
  await credit(s, user.id, 1_000_000n);
  const key = await createKey(s.sql, user.id, 'inc');
  const ledger = ledgerOf(s);
  const writer = writerOf(s);
  writer.start();
  const p = payer(user.id, key.id, { rpm: null, spendNano: null, spendPeriod: null });
  const truth = async () =>
    (
      await s.sql<
        { n: bigint }[]
      >`SELECT coalesce(sum(cost_nano), 0)::bigint AS n FROM usage_records WHERE user_id = ${user.id}`
    )[0]!.n;
  const kept = async () =>
    (await s.sql<{ n: bigint }[]>`SELECT charges_nano AS n FROM reconcile_charges WHERE user_id = ${user.id}`)[0]?.n ??
    0n;
  const checkpoint = async () =>
    (await s.sql<{ id: bigint }[]>`SELECT through_id AS id FROM reconcile_checkpoint`)[0]!.id;

  for (let i = 0; i < 3; i++) await charge(ledger, p, 500n, 100n + BigInt(i));
  await writer.drained();
  t.ok((await reconcile(s.sql)).ok, 'the first run sums every record');
  t.equal(await kept(), await truth(), 'and keeps the sum');
  const [{ max }] = await s.sql<{ max: bigint }[]>`SELECT max(id)::bigint AS max FROM usage_records`;
  t.equal(await checkpoint(), max, 'up to the highest record');

  for (let i = 0; i < 2; i++) await charge(ledger, p, 500n, 200n);
  await writer.drained();
  // Two runs at once: the kept sum must not take the same records twice.
  const both = await Promise.all([reconcile(s.sql), reconcile(s.sql)]);
  t.ok(
    both.every((r) => r.ok),
    'both reconcile',
  );
  t.equal(await kept(), await truth(), 'the records since were added once');

  // A record changed below the checkpoint is not read again by an incremental run; a full one sees it.
  await s.sql`UPDATE usage_records SET cost_nano = cost_nano + 1 WHERE id = (SELECT min(id) FROM usage_records WHERE user_id = ${user.id})`;
  t.ok((await reconcile(s.sql)).ok, 'incremental: the kept sum stands');
  const fullRun = await reconcile(s.sql, undefined, { full: true });
  t.same(
    fullRun.mismatches.map((m) => [m.charged_nano, m.charges_nano]),
    [[(await truth()) - 1n, await truth()]],
    '--full: every record summed again, the change caught',
  );
  await writer.stop();
});
