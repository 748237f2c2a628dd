// A Redis last used by a version before the sharded layout (src/store/redis-legacy.ts): the
// usage records it still queues are charges already taken from balances, so they reach Postgres
// before the new version loads any account, and the old layout's keys go.

import t from 'tap';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createVerifiedUser, creditUser } from '../../src/accounts/users.js';
import { commitEntries } from '../../src/billing/outbox-writer.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { Ledger } from '../../src/billing/ledger.js';
import { NO_LIMITS } from '../../src/billing/key-limits.js';
import { encodeRecord } from '../../src/store/hot.js';
import { RedisHotStore } from '../../src/store/hot-redis.js';
import { REDIS_URL, testStores } from '../helpers/stores.js';
import { usageRecord } from '../helpers/usage-record.js';

const record = (userId: string, costNano: bigint) => usageRecord(userId, randomUUID(), costNano);

t.test("an older version's queued charges are committed and its keys dropped before anything is served", async (t) => {
  const s = await testStores(t);
  const redis = new Redis(REDIS_URL);
  t.teardown(() => redis.disconnect());
  const p = s.redisPrefix;
  const users = await Promise.all(
    [1_000_000n, 500_000n].map(async (credit) => {
      const u = await createVerifiedUser(s.sql, `${randomUUID()}@example.test`);
      await creditUser(s.sql, s.hot, u.id, credit, { method: 'operator', amount: String(credit), currency: 'USD' });
      return u.id;
    }),
  );
  // What the older version left: each account charged in Redis, the records in its one stream,
  // two of them read by its writer (pending) before it stopped, one never read.
  const charges: [string, bigint][] = [
    [users[0]!, 300n],
    [users[0]!, 20n],
    [users[1]!, 7n],
  ];
  await redis.xgroup('CREATE', `${p}outbox`, 'writers', '0', 'MKSTREAM');
  for (const [u, cost] of charges) {
    await redis.hset(`${p}{${u}}:acct`, 'bal', '1', 'cbase', '0', 'gen', 'g-old');
    await redis.xadd(
      `${p}outbox`,
      '*',
      'u',
      u,
      'c',
      cost.toString(),
      'g',
      'g-old',
      'kf',
      '',
      'r',
      encodeRecord(record(u, cost)),
    );
  }
  await redis.xreadgroup('GROUP', 'writers', 'old-writer', 'COUNT', 2, 'STREAMS', `${p}outbox`, '>');

  const hot = s.hot as RedisHotStore;
  t.equal(
    await hot.adoptLegacy((entries) => commitEntries(s.sql, entries)),
    3,
    'every queued record committed, read or not',
  );
  t.equal(await redis.exists(`${p}outbox`), 0, 'the old stream is gone');
  t.same(await redis.keys(`${p}{${users[0]}}*`), [], "the old layout's keys are gone");
  const rows = await s.sql<
    { user_id: string; cost_nano: string }[]
  >`SELECT user_id, cost_nano::text FROM usage_records WHERE user_id = ANY(${users}::uuid[]) ORDER BY cost_nano DESC`;
  const key = (u: string, c: bigint) => `${u} ${c}`;
  t.same(
    rows.map((r) => key(r.user_id, BigInt(r.cost_nano))).sort(),
    charges.map(([u, c]) => key(u, c)).sort(),
    'in Postgres, each once',
  );

  // Loaded now, an account carries those charges: nothing the old version took is spent twice.
  const ledger = new Ledger(s.sql, s.hot, { ttlMs: 60_000, outboxMax: 0 });
  const res = await ledger.reserve({ userId: users[0]!, keyId: randomUUID(), limits: NO_LIMITS }, 999_680n);
  t.equal(res.amount, 999_680n, 'the whole balance left can be held');
  await t.rejects(
    ledger.reserve({ userId: users[0]!, keyId: randomUUID(), limits: NO_LIMITS }, 1n),
    /balance|insufficient|funds/i,
    'and not a nano more',
  );
  await ledger.release(res);
  const report = await reconcile(s.sql, s.hot);
  t.equal(report.ok, true, 'reconcile exact');
  t.equal(await hot.adoptLegacy((entries) => commitEntries(s.sql, entries)), 0, 'nothing to adopt a second time');
});
