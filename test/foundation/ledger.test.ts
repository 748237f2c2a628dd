// The ledger over real Postgres and Redis: reservations primed from Postgres, settlements
// written in batches by the usage writer, and the invariant balance = credits − charges
// holding to the nano-dollar, in Postgres and in the hot store alike.

import t from 'tap';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { createKey } from '../../src/accounts/keys.js';
import { createVerifiedUser, creditUser } from '../../src/accounts/users.js';
import { Ledger } from '../../src/billing/ledger.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { UsageWriter, type UsageRecord } from '../../src/billing/usage-writer.js';
import { GatewayError } from '../../src/errors.js';
import { RedisHotStore } from '../../src/store/hot-redis.js';
import { testStores } from '../helpers/stores.js';

const silent = pino({ level: 'silent' });

const record = (userId: string, costNano: bigint, extra: Partial<UsageRecord> = {}): UsageRecord => ({
  userId,
  keyId: null,
  requestId: `req_${randomUUID()}`,
  model: 'm',
  surface: 'chat',
  stream: false,
  status: 200,
  promptTokens: 10,
  completionTokens: 5,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  costNano,
  officialCostNano: costNano,
  latencyMs: 12,
  ttftMs: null,
  createdAt: new Date(),
  ...extra,
});

async function pgBalance(sql: Awaited<ReturnType<typeof testStores>>['sql'], userId: string): Promise<bigint> {
  const [row] = await sql<{ balance_nano: bigint }[]>`SELECT balance_nano FROM users WHERE id = ${userId}`;
  return row.balance_nano;
}

const credit = (s: Awaited<ReturnType<typeof testStores>>, userId: string, nano: bigint) =>
  creditUser(s.sql, s.hot, userId, nano, { method: 'operator', amount: String(nano), currency: 'USD' });

t.test('reserve primes from Postgres and refuses with insufficient_balance', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'a@example.test');
  await credit(s, user.id, 1_000_000_000n);
  t.equal(await s.hot.balance(user.id), null, 'not loaded before the first request');
  const ledger = new Ledger(s.sql, s.hot, 60_000);

  const r1 = await ledger.reserve(user.id, 400_000_000n);
  t.equal(r1.amount, 400_000_000n);
  t.same(await s.hot.balance(user.id), { balance: 1_000_000_000n, reserved: 400_000_000n }, 'primed from Postgres');

  let caught: unknown;
  try {
    await ledger.reserve(user.id, 600_000_001n);
  } catch (err) {
    caught = err;
  }
  t.type(caught, GatewayError);
  t.equal((caught as GatewayError).kind, 'insufficient_balance');
  t.equal((caught as GatewayError).status, 402);
  t.match((caught as GatewayError).message, /\$0\.600000001.*\$0\.600000000 is available/);
  t.same(await ledger.balance(user.id), { balance: 1_000_000_000n, reserved: 400_000_000n, available: 600_000_000n }, 'a refusal holds nothing');

  const r2 = await ledger.reserve(user.id, 600_000_000n);
  t.equal(await ledger.settle(r2, 100n), 100n);
  t.equal(await ledger.settle(r2, 100n), 0n, 'settling twice takes nothing');
  t.equal(r2.settled, true);
  t.equal(await ledger.settle(r1, 0n), 0n);
  t.same(await ledger.balance(user.id), { balance: 999_999_900n, reserved: 0n, available: 999_999_900n });

  // A user with no balance at all is refused, not errored.
  const poor = await createVerifiedUser(s.sql, 'poor@example.test');
  const refused = await ledger.reserve(poor.id, 1n).then(() => null, (err: unknown) => err);
  t.equal((refused as GatewayError | null)?.kind, 'insufficient_balance', 'refused');
  t.same(await ledger.balance(poor.id), { balance: 0n, reserved: 0n, available: 0n });
  // A zero-cost reservation fits even then.
  const free = await ledger.reserve(poor.id, 0n);
  t.equal(await ledger.settle(free, 0n), 0n);
});

t.test('settlements through the usage writer reconcile to the nano-dollar', async (t) => {
  const s = await testStores(t);
  const ledger = new Ledger(s.sql, s.hot, 60_000);
  const writer = new UsageWriter(s.sql, silent, 60_000, 7); // small batches: many transactions
  const users = await Promise.all(['u1', 'u2', 'u3'].map((n) => createVerifiedUser(s.sql, `${n}@example.test`)));
  const keys = await Promise.all(users.map((u) => createKey(s.sql, u.id)));
  // Credits in odd amounts, one of them in two deposits.
  await credit(s, users[0].id, 5_000_000_007n);
  await credit(s, users[1].id, 123_456_789n);
  await credit(s, users[1].id, 1n);
  await credit(s, users[2].id, 10_000n);

  const charged = new Map<string, bigint>();
  const work = Array.from({ length: 120 }, async (_, i) => {
    const u = users[i % 3];
    const hold = 40_000_000n;
    let res;
    try {
      res = await ledger.reserve(u.id, u === users[2] ? 1_000n : hold);
    } catch {
      return; // refused: nothing to settle
    }
    // Costs with odd nano amounts; user 3 asks for more than it has, so its charges get capped.
    const cost = u === users[2] ? 3_333n : BigInt(1_000_003 * (i + 1));
    const took = await ledger.settle(res, cost);
    charged.set(u.id, (charged.get(u.id) ?? 0n) + took);
    writer.push(record(u.id, took, { keyId: keys[i % 3].id }));
  });
  await Promise.all(work);
  t.ok(writer.pending > 0);
  await writer.flush();
  t.equal(writer.pending, 0, 'everything written');

  const report = await reconcile(s.sql);
  t.equal(report.users, 3);
  t.same(report.mismatches, [], 'no mismatches');
  t.equal(report.ok, true);
  for (const [i, u] of users.entries()) {
    const hot = await s.hot.balance(u.id);
    const pg = await pgBalance(s.sql, u.id);
    t.equal(pg, hot?.balance, `user ${i + 1}: Postgres balance = hot balance (${pg})`);
    t.equal(hot?.reserved, 0n, 'nothing left reserved');
    const [{ sum }] = await s.sql<{ sum: bigint }[]>`SELECT coalesce(sum(cost_nano), 0)::bigint AS sum FROM usage_records WHERE user_id = ${u.id}`;
    t.equal(sum, charged.get(u.id) ?? 0n, 'the records hold what the hot store took');
  }
  t.equal(await pgBalance(s.sql, users[2].id), 0n, 'user 3 ran dry, never below zero');
  const [{ used }] = await s.sql<{ used: number }[]>`SELECT count(*)::int AS used FROM api_keys WHERE last_used_at IS NOT NULL`;
  t.equal(used, 3, 'keys carry their last use');
  await writer.stop();
});

t.test('the writer caps a charge at the Postgres balance', async (t) => {
  const s = await testStores(t);
  const writer = new UsageWriter(s.sql, silent, 60_000, 100);
  const user = await createVerifiedUser(s.sql, 'capped@example.test');
  const other = await createVerifiedUser(s.sql, 'other@example.test');
  await credit(s, user.id, 100n);
  await credit(s, other.id, 1_000n);
  writer.push(record(user.id, 80n));
  writer.push(record(user.id, 80n));
  writer.push(record(user.id, 5n));
  writer.push(record(randomUUID(), 50n)); // a user deleted meanwhile: dropped, not fatal
  writer.push(record(other.id, 999n));
  await writer.flush();
  t.equal(writer.pending, 0);
  const rows = await s.sql<{ cost_nano: bigint }[]>`SELECT cost_nano FROM usage_records WHERE user_id = ${user.id} ORDER BY id`;
  t.same(rows.map((r) => r.cost_nano), [80n, 20n, 0n], 'capped at what was left, in order');
  t.equal(await pgBalance(s.sql, user.id), 0n);
  t.equal(await pgBalance(s.sql, other.id), 1n, 'the rest of the batch is written');
  t.equal((await reconcile(s.sql)).ok, true, 'the ledger still reconciles');

  // A tampered balance is reported.
  await s.sql`UPDATE users SET balance_nano = balance_nano + 1 WHERE id = ${other.id}`;
  const report = await reconcile(s.sql);
  t.equal(report.ok, false);
  t.same(report.mismatches.map((m) => ({ email: m.email, balance: m.balance_nano, credits: m.credits_nano, charges: m.charges_nano })), [
    { email: 'other@example.test', balance: 2n, credits: 1_000n, charges: 999n },
  ]);
});

t.test('an unreachable hot store refuses with unavailable (503), not an internal error', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'down@example.test');
  const down = new RedisHotStore('redis://127.0.0.1:1', 'down:');
  t.teardown(() => down.close());
  const ledger = new Ledger(s.sql, down, 60_000);
  const err = await ledger.reserve(user.id, 1n).then(() => null, (e: unknown) => e);
  t.type(err, GatewayError);
  t.equal((err as GatewayError).kind, 'unavailable');
  t.equal((err as GatewayError).status, 503);
});

t.test('creditUser: deposit and balance in Postgres, then the loaded hot balance', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'c@example.test');
  const ledger = new Ledger(s.sql, s.hot, 60_000);
  await ledger.balance(user.id); // loads 0
  const r = await credit(s, user.id, 2_500n);
  t.equal(r.balance, 2_500n);
  t.same(await s.hot.balance(user.id), { balance: 2_500n, reserved: 0n }, 'the loaded hot balance follows');
  const [d] = await s.sql<{ status: string; credit_nano: bigint }[]>`SELECT status, credit_nano FROM deposits WHERE id = ${r.depositId}`;
  t.same({ ...d }, { status: 'paid', credit_nano: 2_500n });
  t.equal((await reconcile(s.sql)).ok, true);
});
