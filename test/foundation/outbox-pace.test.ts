// The usage writer's pause between rounds follows the rate records arrive at (RoundPacer): a
// steady trickle is written in a few transactions a second, not one per shortest pause, and
// nothing waiting for the outbox to drain waits out a long pause. Real Postgres and Redis.

import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { createVerifiedUser, creditUser } from '../../src/accounts/users.js';
import { NO_LIMITS } from '../../src/billing/key-limits.js';
import { Ledger, type Payer } from '../../src/billing/ledger.js';
import { gatewayWriter, RoundPacer } from '../../src/billing/outbox-writer.js';
import { testStores } from '../helpers/stores.js';
import { usageRecord as record } from '../helpers/usage-record.js';

const silent = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Real stores, a user with `nano` on the balance, and a ledger that charges them. */
async function funded(t: Test, email: string, nano: bigint) {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, email);
  await creditUser(s.sql, s.hot, user.id, nano, {
    method: 'operator',
    amount: String(Number(nano) / 1e9),
    currency: 'USD',
  });
  const ledger = new Ledger(s.sql, s.hot, { ttlMs: 60_000, outboxMax: 0 });
  const payer: Payer = { userId: user.id, keyId: randomUUID(), limits: NO_LIMITS };
  /** One request: its hold, then its charge with the usage record. */
  const charge = async (cost: bigint) => {
    const hold = await ledger.reserve(payer, 1000n);
    await ledger.settle(hold, cost, record(user.id, hold.id, cost));
  };
  return { s, user, charge };
}

t.test('the pause aims at 100 records a round, within its bounds', async (t) => {
  const p = new RoundPacer(50, 250);
  t.equal(p.ms, 50, 'starts at the shortest');
  t.equal(p.after(25), 200, '25 records in 50 ms: 200 ms gathers 100');
  t.equal(p.after(100), 200, 'on target: unchanged');
  t.equal(p.after(40), 250, 'slower still: capped at the longest');
  t.equal(p.after(0), 250, 'nothing read: the longest');
  t.equal(p.after(500), 50, 'a rush: back to the shortest at once');
  t.equal(p.after(1000), 50, 'never below the shortest');
  t.equal(p.after(50), 100);
  t.equal(new RoundPacer(50, 10).after(1), 50, 'a longest below the shortest counts as the shortest');
  t.equal(new RoundPacer(20, 20).after(1), 20, 'equal bounds: a fixed pause');
});

t.test('a steady trickle is written in few transactions, every record exactly once', async (t) => {
  const { s, user, charge } = await funded(t, 'pace@example.test', 10_000_000_000n);
  let rounds = 0;
  let committed = 0;
  const writer = gatewayWriter(
    s.sql,
    s.hot,
    silent,
    { USAGE_BATCH_MAX: 1000, USAGE_FLUSH_MS: 10, USAGE_FLUSH_MAX_MS: 400 },
    {
      committed: (n) => {
        rounds++;
        committed += n;
      },
    },
  );
  writer.start();
  t.teardown(() => writer.stop());

  // 300 records over about 1.5 s: a 10 ms pause would make on the order of a hundred rounds.
  const total = 300;
  for (let i = 0; i < total; i++) {
    await charge(7n);
    if (i % 10 === 9) await sleep(50);
  }
  await writer.drained(5000);
  // The outbox empties at the acknowledgement; the observer hears of the batch just after it.
  for (let i = 0; i < 200 && committed < total; i++) await sleep(10);
  t.equal(committed, total, 'every record committed');
  t.ok(rounds <= 20, `${rounds} rounds for ${total} records at about 200 a second`);
  t.ok(writer.pacer.ms > 10, `the pause grew past the shortest (${writer.pacer.ms} ms)`);
  const [row] = await s.sql<
    { n: number; sum: bigint }[]
  >`SELECT count(*)::int AS n, sum(cost_nano)::bigint AS sum FROM usage_records WHERE user_id = ${user.id}`;
  t.equal(row!.n, total);
  t.equal(row!.sum, 7n * BigInt(total));
  const [u] = await s.sql<{ balance_nano: bigint }[]>`SELECT balance_nano FROM users WHERE id = ${user.id}`;
  t.equal(u!.balance_nano, 10_000_000_000n - 7n * BigInt(total), 'Postgres balance charged exactly');
});

t.test('waiting for the drain cuts a long pause short', async (t) => {
  const { s, charge } = await funded(t, 'wake@example.test', 1_000_000_000n);
  const writer = gatewayWriter(s.sql, s.hot, silent, {
    USAGE_BATCH_MAX: 1000,
    USAGE_FLUSH_MS: 60_000,
    USAGE_FLUSH_MAX_MS: 60_000,
  });
  writer.start();
  t.teardown(() => writer.stop());
  await charge(5n);
  await writer.drained(5000);
  // The writer now pauses a minute; the next record waits in the outbox until someone asks.
  await charge(5n);
  await sleep(200);
  t.equal(await s.hot.outboxLength(), 1, 'held back by the pause');
  await writer.drained(3000);
  t.equal(await s.hot.outboxLength(), 0, 'drained well before the pause ends');
  t.equal(writer.written, 2);
});
