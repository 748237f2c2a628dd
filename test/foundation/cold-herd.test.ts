// A cold process meeting many requests for one key and one account at once (a restart under
// load): one key lookup and one account load serve them all, on real Postgres and Redis. The
// statements are counted by the Postgres client's own debug hook.

import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { createKey, generateKey, KeyResolver } from '../../src/accounts/keys.js';
import { createVerifiedUser, creditUser } from '../../src/accounts/users.js';
import { NO_LIMITS } from '../../src/billing/key-limits.js';
import { Ledger } from '../../src/billing/ledger.js';
import { commitEntries } from '../../src/billing/outbox-writer.js';
import { reconcile } from '../../src/billing/reconcile.js';
import type { Sql } from '../../src/store/sql.js';
import { testStores } from '../helpers/stores.js';
import { usageRecord } from '../helpers/usage-record.js';

const N = 200;

async function countingSql(t: Test, url: string) {
  const statements: string[] = [];
  const sql = postgres(url, {
    types: { bigint: postgres.BigInt },
    onnotice: () => {},
    debug: (_c, query) => statements.push(query),
  }) as unknown as Sql;
  t.teardown(() => sql.end({ timeout: 5 }));
  return { sql, count: (needle: string) => statements.filter((q) => q.includes(needle)).length };
}

t.test(`${N} requests at once with a key no process has seen: one lookup`, async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'herd@example.test');
  const { key, id } = await createKey(s.sql, user.id);
  const { sql, count } = await countingSql(t, s.databaseUrl);
  const keys = new KeyResolver(sql, s.hot, 30_000);
  await keys.start();
  const got = await Promise.all(Array.from({ length: N }, () => keys.resolve(key)));
  t.ok(
    got.every((g) => g?.keyId === id && g.userId === user.id),
    'every request has the identity',
  );
  t.equal(count('FROM api_keys'), 1, 'Postgres was asked once');

  const unknown = generateKey().key;
  const none = await Promise.all(Array.from({ length: N }, () => keys.resolve(unknown)));
  t.ok(
    none.every((g) => g === null),
    'an unknown key is refused for all',
  );
  t.equal(count('FROM api_keys'), 2, 'after one lookup');
});

t.test('a revocation heard while a lookup runs: requests after it do not share that lookup', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'herd2@example.test');
  const { key, id } = await createKey(s.sql, user.id);
  // Another process looked the key up: the shared cache holds it.
  t.equal((await new KeyResolver(s.sql, s.hot, 30_000).resolve(key))?.keyId, id);
  // This process's first lookup reads that cache entry, and its answer is held back until the
  // key has been revoked: a lookup that began before the revocation and ends after it.
  let release!: () => void;
  let hold: Promise<void> | undefined = new Promise<void>((r) => (release = r));
  const slowed = new Proxy(s.hot, {
    get: (target, p, r) =>
      p === 'getCached'
        ? async (name: string) => {
            const value = await target.getCached(name);
            const h = hold;
            hold = undefined;
            if (h) await h;
            return value;
          }
        : Reflect.get(target, p, r),
  });
  const keys = new KeyResolver(s.sql, slowed, 30_000);
  await keys.start();
  const early = keys.resolve(key);
  await keys.revoke(user.id, id);
  await new Promise((r) => setTimeout(r, 1000)); // the revocation's message reaches this process
  const late = await Promise.race([keys.resolve(key), new Promise((r) => setTimeout(() => r('still waiting'), 2000))]);
  t.equal(late, null, 'a request after the revocation looks again, and is refused');
  release();
  t.equal((await early)?.keyId, id, 'the one that began before it was answered from what it read');
});

t.test(`${N} reserves at once on an account not loaded yet: one load, exact holds`, async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'herd3@example.test');
  await creditUser(s.sql, s.hot, user.id, 1_000_000n, { method: 'operator', amount: '1000000', currency: 'USD' });
  const { sql, count } = await countingSql(t, s.databaseUrl);
  const ledger = new Ledger(sql, s.hot, { ttlMs: 60_000, outboxMax: 0 });
  const payer = { userId: user.id, keyId: randomUUID(), limits: NO_LIMITS };
  const results = await Promise.allSettled(Array.from({ length: N }, () => ledger.reserve(payer, 10_000n)));
  const ok = results.filter((r) => r.status === 'fulfilled').length;
  t.equal(ok, 100, 'exactly what the balance covers is held');
  t.equal(count('u.balance_nano, u.charged_nano'), 1, 'the account was read from Postgres once');
  t.same(await s.hot.balance(user.id), { balance: 1_000_000n, reserved: 1_000_000n });
});

t.test('50 accounts not loaded, met in one turn: one statement loads them all, each its own', async (t) => {
  const s = await testStores(t);
  const users = await Promise.all(
    Array.from({ length: 50 }, (_, i) => createVerifiedUser(s.sql, `herd-many${i}@example.test`)),
  );
  // Account i holds (i + 1) × 1,000 nano: each reserve of 1,000 fits, and each balance tells whose it is.
  for (const [i, u] of users.entries())
    await creditUser(s.sql, s.hot, u.id, BigInt(i + 1) * 1_000n, { method: 'operator', amount: '1', currency: 'USD' });
  for (const u of users) await s.hot.forgetBalance(u.id);
  const { sql, count } = await countingSql(t, s.databaseUrl);
  const ledger = new Ledger(sql, s.hot, { ttlMs: 60_000, outboxMax: 0 });
  const results = await Promise.allSettled(
    users.map((u) => ledger.reserve({ userId: u.id, keyId: randomUUID(), limits: NO_LIMITS }, 1_000n)),
  );
  t.ok(
    results.every((r) => r.status === 'fulfilled'),
    'every account held its request',
  );
  t.equal(count('u.balance_nano, u.charged_nano'), 1, 'one statement read the fifty accounts');
  t.equal(count('BEGIN'), 0, 'without a transaction round');
  const balances = await Promise.all(users.map((u) => s.hot.balance(u.id)));
  t.same(
    balances.map((b) => b?.balance),
    users.map((_, i) => BigInt(i + 1) * 1_000n),
    'each account its own balance',
  );
});

t.test('a key never seen: its lookup reads the account too, which the first reserve loads', async (t) => {
  const s = await testStores(t);
  const user = await createVerifiedUser(s.sql, 'herd-offer@example.test');
  await creditUser(s.sql, s.hot, user.id, 50_000n, { method: 'operator', amount: '1', currency: 'USD' });
  await s.hot.forgetBalance(user.id);
  const { key } = await createKey(s.sql, user.id);
  const { sql, count } = await countingSql(t, s.databaseUrl);
  const ledger = new Ledger(sql, s.hot, { ttlMs: 60_000, outboxMax: 0 });
  const keys = new KeyResolver(sql, s.hot, 30_000, 100, (u, snapshot) => ledger.offer(u, snapshot));
  const identity = (await keys.resolve(key))!;
  const payer = { userId: identity.userId, keyId: identity.keyId, limits: identity.limits };
  await ledger.precheck(payer);
  await ledger.reserve(payer, 20_000n);
  t.equal(count('u.balance_nano, u.charged_nano'), 1, 'one statement read the key and the account');
  t.same(await s.hot.balance(user.id), { balance: 50_000n, reserved: 20_000n }, 'loaded with its balance');

  // Another key of a user not loaded, whose load comes after the snapshot went stale: read again.
  const other = await createVerifiedUser(s.sql, 'herd-offer2@example.test');
  const { key: key2 } = await createKey(s.sql, other.id);
  const second = (await keys.resolve(key2))!;
  await new Promise((r) => setTimeout(r, 1_100));
  // Meanwhile a credit landed in Postgres, with no account in Redis to raise.
  await creditUser(s.sql, s.hot, other.id, 7_000n, { method: 'operator', amount: '1', currency: 'USD' });
  await ledger.reserve({ userId: second.userId, keyId: second.keyId, limits: second.limits }, 1_000n);
  t.equal(count('u.balance_nano, u.charged_nano'), 3, 'the second lookup, then a load of its own');
  t.same(await s.hot.balance(other.id), { balance: 7_000n, reserved: 1_000n }, 'the credit is in what it loaded');

  // A credit committed after the lookup read the account, before the load took that snapshot:
  // the hot store heard of it with no account to raise, and the load takes it (credit.lua).
  const third = await createVerifiedUser(s.sql, 'herd-offer3@example.test');
  await creditUser(s.sql, s.hot, third.id, 2_000n, { method: 'operator', amount: '1', currency: 'USD' });
  await s.hot.forgetBalance(third.id);
  const { key: key3 } = await createKey(s.sql, third.id);
  const looked = (await keys.resolve(key3))!;
  await creditUser(s.sql, s.hot, third.id, 5_000n, { method: 'operator', amount: '1', currency: 'USD' });
  await ledger.reserve({ userId: looked.userId, keyId: looked.keyId, limits: looked.limits }, 1_000n);
  t.equal(count('u.balance_nano, u.charged_nano'), 4, "the load took the lookup's snapshot");
  t.same(await s.hot.balance(third.id), { balance: 7_000n, reserved: 1_000n }, 'with the credit that followed it');
  // And a credit whose word reaches the store only after that load: counted once more, no more.
  await creditUser(s.sql, s.hot, third.id, 3_000n, { method: 'operator', amount: '1', currency: 'USD' });
  t.same(await s.hot.balance(third.id), { balance: 10_000n, reserved: 1_000n }, 'a later credit, once');
});

t.test(
  'a cap set while the account is being loaded: the load reads again, and the cap counts what was spent',
  async (t) => {
    const s = await testStores(t);
    const user = await createVerifiedUser(s.sql, 'herd-cap@example.test');
    await creditUser(s.sql, s.hot, user.id, 100_000n, { method: 'operator', amount: '1', currency: 'USD' });
    await s.hot.forgetBalance(user.id);
    const spender = await createKey(s.sql, user.id);
    const other = await createKey(s.sql, user.id);
    // The first key spent 5,000 today, with no cap then.
    await s.sql`INSERT INTO usage_key_daily (key_id, day, user_id, cost_nano)
              VALUES (${spender.id}, (now() AT TIME ZONE 'UTC')::date, ${user.id}, 5000)`;
    const { sql, count } = await countingSql(t, s.databaseUrl);
    const ledger = new Ledger(sql, s.hot, { ttlMs: 60_000, outboxMax: 0 });
    const keys = new KeyResolver(sql, s.hot, 30_000, 100, (u, snapshot) => ledger.offer(u, snapshot));
    await keys.start();
    // A request with the other key reads the account (no cap anywhere yet) for its load...
    const looked = (await keys.resolve(other.key))!;
    // ...and before the load, the owner caps the first key at 6,000 a day.
    await keys.update(user.id, spender.id, { spend: { nano: 6_000n, period: 'day' } });
    await ledger.reserve({ userId: looked.userId, keyId: looked.keyId, limits: looked.limits }, 1_000n);
    t.equal(count('u.balance_nano, u.charged_nano'), 2, 'the offered snapshot was refused, the account read again');
    const capped = (await keys.resolve(spender.key))!;
    t.equal(capped.limits.spendNano, 6_000n, 'the key has its cap');
    await t.rejects(
      ledger.reserve({ userId: capped.userId, keyId: capped.keyId, limits: capped.limits }, 2_000n),
      { code: 'key_spend_limit' },
      'the 5,000 spent before the cap count against it',
    );
    t.ok(
      await ledger.reserve({ userId: capped.userId, keyId: capped.keyId, limits: capped.limits }, 1_000n),
      'what is left of it holds',
    );
  },
);

t.test(
  "a key's rpm limit changed while a snapshot waits for its load: the account stays, and no charge goes missing",
  async (t) => {
    const s = await testStores(t);
    const user = await createVerifiedUser(s.sql, 'herd-rpm@example.test');
    await creditUser(s.sql, s.hot, user.id, 10_000n, { method: 'operator', amount: '1', currency: 'USD' });
    await s.hot.forgetBalance(user.id);
    const key = await createKey(s.sql, user.id);
    // This process looks the key up: its snapshot (10,000) waits for the load.
    const here = new Ledger(s.sql, s.hot, { ttlMs: 60_000, outboxMax: 0 });
    const keys = new KeyResolver(s.sql, s.hot, 30_000, 100, (u, snapshot) => here.offer(u, snapshot));
    await keys.start();
    const looked = (await keys.resolve(key.key))!;
    // Meanwhile another process loads the account and charges 1,000, committed and acknowledged.
    const there = new Ledger(s.sql, s.hot, { ttlMs: 60_000, outboxMax: 0 });
    const res = await there.reserve({ userId: user.id, keyId: key.id, limits: looked.limits }, 1_000n);
    await there.settle(res, 1_000n, usageRecord(user.id, randomUUID(), 1_000n, { keyId: key.id }));
    const entries = await s.hot.readOutbox('w', 10, 10);
    await s.hot.ackOutbox(await commitEntries(s.sql, entries));
    // The owner changes the key's rpm limit: nothing the account holds.
    await keys.update(user.id, key.id, { rpm: 5 });
    await here.reserve({ userId: looked.userId, keyId: looked.keyId, limits: looked.limits }, 1_000n);
    t.same(await s.hot.balance(user.id), { balance: 9_000n, reserved: 1_000n }, 'the charge is in the balance');
    t.same((await reconcile(s.sql, s.hot)).hotMismatches, [], 'and the hot store agrees with Postgres');
  },
);
