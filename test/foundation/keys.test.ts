// Service keys: creation, lookup, revocation; only the SHA-256 is stored; a revocation reaches
// another gateway process through Redis pub/sub within a second.

import t from 'tap';
import { createHash, randomUUID } from 'node:crypto';
import { createKey, generateKey, hashSecret, KeyResolver, listKeys, looksLikeKey } from '../../src/accounts/keys.js';
import { NO_LIMITS } from '../../src/billing/key-limits.js';
import { commitEntries } from '../../src/billing/outbox-writer.js';
import { createVerifiedUser } from '../../src/accounts/users.js';
import { RedisHotStore } from '../../src/store/hot-redis.js';
import { childEnv, startServe } from '../helpers/child.js';
import { REDIS_URL, testStores } from '../helpers/stores.js';
import { usageRecord } from '../helpers/usage-record.js';

const KEY_RE = /^ar-[0-9A-Za-z]{40}$/;

t.test('generated keys: shape, randomness, hash', async (t) => {
  const seen = new Set<string>();
  const counts = new Map<string, number>();
  for (let i = 0; i < 2000; i++) {
    const { key, hash, prefix } = generateKey();
    if (!KEY_RE.test(key)) t.fail(`bad key ${key}`);
    seen.add(key);
    if (hash !== createHash('sha256').update(key).digest('hex')) t.fail(`hash of ${key}`);
    if (prefix !== key.slice(0, 9)) t.fail(`prefix ${prefix} of ${key}`);
    for (const c of key.slice(3)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  t.equal(seen.size, 2000, 'no repeats');
  t.equal(counts.size, 62, 'every base62 character occurs');
  // 80,000 characters over 62 symbols: about 1290 each; a biased generator strays far from it.
  const values = [...counts.values()];
  t.ok(
    Math.min(...values) > 1100 && Math.max(...values) < 1500,
    `even spread (${Math.min(...values)}..${Math.max(...values)})`,
  );
  t.ok(looksLikeKey(generateKey().key));
  t.notOk(looksLikeKey('ar-short'));
  t.notOk(looksLikeKey('sk-' + 'a'.repeat(40)));
});

t.test('create, resolve, revoke; only the hash is stored', async (t) => {
  const stores = await testStores(t);
  const alice = await createVerifiedUser(stores.sql, 'Alice@Example.test');
  const bob = await createVerifiedUser(stores.sql, 'bob@example.test');
  t.equal(alice.email, 'alice@example.test', 'emails are normalized');
  const created = await createKey(stores.sql, alice.id, 'laptop');
  t.match(created.key, KEY_RE);
  t.equal(created.name, 'laptop');
  t.equal(created.prefix, created.key.slice(0, 9));
  t.equal(created.revoked_at, null);

  const [row] = await stores.sql<{ key_hash: string }[]>`SELECT key_hash FROM api_keys WHERE id = ${created.id}`;
  t.equal(row.key_hash, hashSecret(created.key));
  const secret = created.key.slice(9);
  const [{ n }] = await stores.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM api_keys k
    WHERE strpos(row_to_json(k)::text, ${created.key}) > 0 OR strpos(row_to_json(k)::text, ${secret}) > 0`;
  t.equal(n, 0, 'the key text appears nowhere in api_keys');
  const listed = await listKeys(stores.sql, alice.id);
  t.same(
    listed.map((k) => k.id),
    [created.id],
  );
  t.notOk(JSON.stringify(listed).includes(secret), 'nor in what listKeys returns');

  const resolver = new KeyResolver(stores.sql, stores.hot, 30_000);
  await resolver.start();
  t.same(await resolver.resolve(created.key), { keyId: created.id, userId: alice.id, limits: NO_LIMITS });
  t.same(
    await resolver.resolve(created.key),
    { keyId: created.id, userId: alice.id, limits: NO_LIMITS },
    'again, from the cache',
  );
  const unknown = generateKey().key;
  t.equal(await resolver.resolve(unknown), null, 'an unknown key');
  // Counted on the real store: a repeat of an unknown key asks neither Redis nor Postgres.
  let lookups = 0;
  const counting = new Proxy(stores.hot, {
    get: (target, p, r) =>
      p === 'getCached' ? (...a: [string]) => (lookups++, target.getCached(...a)) : Reflect.get(target, p, r),
  });
  const negative = new KeyResolver(stores.sql, counting, 30_000);
  t.equal(await negative.resolve(unknown), null);
  t.equal(await negative.resolve(unknown), null);
  t.equal(await negative.resolve(unknown), null);
  t.equal(lookups, 1, 'an unknown key is remembered as unknown for a few seconds');
  t.equal(await resolver.resolve('Bearer nonsense'), null, 'not a key at all');
  t.equal(
    await resolver.resolve(created.key.slice(0, -1) + (created.key.endsWith('a') ? 'b' : 'a')),
    null,
    'one character off',
  );

  t.equal(await resolver.revoke(bob.id, created.id), null, 'another user cannot revoke it');
  t.same(await resolver.resolve(created.key), { keyId: created.id, userId: alice.id, limits: NO_LIMITS }, 'still live');

  const revoked = await resolver.revoke(alice.id, created.id);
  t.equal(revoked?.id, created.id);
  t.type(revoked?.revoked_at, Date);
  t.equal(await resolver.resolve(created.key), null, 'the revoking process refuses it at once');
  const again = await resolver.revoke(alice.id, created.id);
  t.equal(again?.revoked_at.getTime(), revoked?.revoked_at.getTime(), 'revoking twice keeps the first time');

  // A resolver that never cached it (another process) refuses it too.
  const fresh = new KeyResolver(stores.sql, stores.hot, 30_000);
  t.equal(await fresh.resolve(created.key), null);

  // The race of a process that read Postgres just before the revocation committed: its late
  // write to the shared cache (set-if-absent) must not bring the key back.
  await stores.hot.setCached(
    `key:${hashSecret(created.key)}`,
    JSON.stringify({ keyId: created.id, userId: alice.id }),
    60_000,
    { onlyIfAbsent: true },
  );
  t.equal(
    await new KeyResolver(stores.sql, stores.hot, 30_000).resolve(created.key),
    null,
    'a stale lookup cannot revive a revoked key',
  );
});

t.test(
  'new keys met at once: one Postgres query for all, each answered its own; the cache keeps the newest',
  async (t) => {
    const stores = await testStores(t);
    const users = await Promise.all(
      Array.from({ length: 5 }, (_, i) => createVerifiedUser(stores.sql, `burst${i}@example.test`)),
    );
    const live = await Promise.all(
      users.map((u, i) => createKey(stores.sql, u.id, `k${i}`, i === 2 ? { rpm: 7 } : {})),
    );
    const revoked = await createKey(stores.sql, users[0]!.id, 'gone');
    await stores.sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${revoked.id}`;
    const disabled = await createVerifiedUser(stores.sql, 'disabled@example.test');
    const ofDisabled = await createKey(stores.sql, disabled.id, 'blocked');
    await stores.sql`UPDATE users SET disabled_at = now() WHERE id = ${disabled.id}`;
    const unknown = generateKey().key;

    // Statements counted on the real store's client (not the fragments they are made of).
    let queries = 0;
    const counting = new Proxy(stores.sql, {
      apply: (target, self, args) => {
        if ((args[0] as string[])[0]!.trimStart().startsWith('SELECT')) queries++;
        return Reflect.apply(target, self, args);
      },
    });
    const resolver = new KeyResolver(counting, stores.hot, 30_000, 4);
    const answers = await Promise.all(
      [...live.map((k) => k.key), revoked.key, ofDisabled.key, unknown].map((k) => resolver.resolve(k)),
    );
    t.equal(queries, 1, 'eight keys looked up in one turn: one query');
    t.same(
      answers.slice(0, 5).map((a) => a?.keyId),
      live.map((k) => k.id),
      'each live key its own identity',
    );
    t.same(
      answers.slice(0, 5).map((a) => a?.userId),
      users.map((u) => u.id),
      'and its own user',
    );
    t.equal(answers[2]?.limits.rpm, 7, 'with its own limits');
    t.same(answers.slice(5), [null, null, null], "a revoked key, a disabled account's and an unknown one: none");

    // At most four remembered: the first key (oldest) went, the last is answered without a store.
    let reads = 0;
    const hot = new Proxy(stores.hot, {
      get: (target, p, r) =>
        p === 'getCached' ? (...a: [string]) => (reads++, target.getCached(...a)) : Reflect.get(target, p, r),
    });
    const small = new KeyResolver(stores.sql, hot, 30_000, 4);
    for (const k of live) await small.resolve(k.key);
    reads = 0;
    await small.resolve(live[4]!.key);
    t.equal(reads, 0, 'the newest key: from this process');
    await small.resolve(live[0]!.key);
    t.equal(reads, 1, 'the oldest was let go past the limit, and is looked up again');
  },
);

t.test('a revocation reaches another gateway process within 1 s', async (t) => {
  const stores = await testStores(t);
  const user = await createVerifiedUser(stores.sql, 'carol@example.test');
  const { key, id } = await createKey(stores.sql, user.id);
  const gateway = await startServe(
    t,
    childEnv({
      DATABASE_URL: stores.databaseUrl,
      REDIS_URL,
      REDIS_PREFIX: stores.redisPrefix,
      // Far longer than the test: only the pushed revocation can make it forget the key.
      KEY_CACHE_TTL_MS: '600000',
    }),
  );
  const models = () =>
    fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => {
      await r.arrayBuffer();
      return r.status;
    });
  t.equal(await models(), 200, 'the key works (and is now cached in the gateway)');
  t.equal(await models(), 200);

  // The revoking side is this process, on its own connections with the same prefix.
  const hot = new RedisHotStore(REDIS_URL, stores.redisPrefix);
  t.teardown(() => hot.close());
  const resolver = new KeyResolver(stores.sql, hot, 30_000);
  const started = performance.now();
  t.ok(await resolver.revoke(user.id, id));
  let status = 200;
  while (performance.now() - started < 3000) {
    status = await models();
    if (status === 401) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const ms = performance.now() - started;
  t.equal(status, 401, 'the gateway refuses the revoked key');
  t.ok(ms < 1000, `within 1 s (took ${ms.toFixed(0)} ms)`);
  t.comment(`revocation seen by the other process after ${ms.toFixed(1)} ms`);
  t.same(await gateway.stop(), { code: 0, signal: null });
});

t.test("a key's last use is its latest record's time, kept by the records' trigger", async (t) => {
  const stores = await testStores(t);
  const user = await createVerifiedUser(stores.sql, 'last-use@example.test');
  const used = await createKey(stores.sql, user.id, 'used');
  await createKey(stores.sql, user.id, 'idle');
  const day = 86_400_000;
  const t0 = Date.UTC(2026, 10, 3, 10, 0, 0);
  // Committed out of order, across three days: the latest wins, not the last written.
  for (const at of [t0 + 2 * day, t0, t0 + day + 5_000]) {
    await commitEntries(stores.sql, [
      {
        id: `${at}-0`,
        record: usageRecord(user.id, randomUUID(), 10n, { keyId: used.id, createdAt: new Date(at) }),
        generation: '',
        spendField: '',
      },
    ]);
  }
  const lastUse = async () =>
    Object.fromEntries((await listKeys(stores.sql, user.id)).map((k) => [k.name, k.last_used_at?.getTime() ?? null]));
  t.same(await lastUse(), { used: t0 + 2 * day, idle: null });
  const [{ column }] = await stores.sql<{ column: Date | null }[]>`
    SELECT last_used_at AS column FROM api_keys WHERE id = ${used.id}`;
  t.equal(column, null, 'the writer no longer writes the key row');

  // A use recorded before sql/042, in api_keys alone, counts while it is the later one.
  await stores.sql`UPDATE api_keys SET last_used_at = ${new Date(t0 + 3 * day)} WHERE id = ${used.id}`;
  t.same(await lastUse(), { used: t0 + 3 * day, idle: null });
  const resolver = new KeyResolver(stores.sql, stores.hot, 30_000);
  const renamed = await resolver.update(user.id, used.id, { name: 'renamed' });
  t.equal(renamed?.last_used_at?.getTime(), t0 + 3 * day, 'a change answers with it too');
});
