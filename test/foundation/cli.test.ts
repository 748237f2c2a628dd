// The operator command line, as a real child process: against shared Postgres and Redis, and
// on the embedded default (PGlite and the in-process hot store under DATA_DIR). The first test
// runs src/bin.js, the `airouter` of package.json's bin, on the sources through tsx; the others
// run the bundle, as `npm start` does.

import t, { type Test } from 'tap';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hashSecret } from '../../src/accounts/keys.js';
import { Ledger } from '../../src/billing/ledger.js';
import { childEnv, lines, runCli, startServe } from '../helpers/child.js';
import { REDIS_URL, testStores } from '../helpers/stores.js';

const KEY_RE = /^ar-[0-9A-Za-z]{40}$/;
const BIN = 'src/bin.js';

/** Exit 1 with exactly one line on stderr, matching `re`. */
function failsWith(t: Test, r: { code: number | null; stderr: string }, re: RegExp, what: string) {
  t.equal(r.code, 1, `${what}: exit 1`);
  t.equal(lines(r.stderr).length, 1, `${what}: one stderr line (${JSON.stringify(r.stderr)})`);
  t.match(r.stderr, /^airouter: /, what);
  t.match(r.stderr, re, what);
}

t.test('against Postgres and Redis', async (t) => {
  const s = await testStores(t);
  // The sources, whatever the build (src/bin-entry.js picks the build when it is fresh).
  const env = childEnv({ DATABASE_URL: s.databaseUrl, REDIS_URL, REDIS_PREFIX: s.redisPrefix, AIROUTER_SOURCES: '1' });
  const balance = async (email: string) => {
    const [row] = await s.sql<{ balance_nano: bigint }[]>`SELECT balance_nano FROM users WHERE email = ${email}`;
    return row?.balance_nano;
  };

  // Independent commands run side by side (each child costs about a second of CPU).
  const [created, plain, noEmail, badAmount] = await Promise.all([
    runCli(['user', 'create', '--email', 'Op@Example.test', '--balance-usd', '12.5'], env, 30_000, BIN),
    runCli(['user', 'create', '--email', 'plain@example.test', '--password', 'hunter2hunter2'], env, 30_000, BIN),
    runCli(['user', 'create'], env, 30_000, BIN),
    runCli(['user', 'create', '--email', 'x@example.test', '--balance-usd', '-5'], env, 30_000, BIN),
  ]);
  t.equal(created.code, 0, created.stderr);
  t.match(created.stdout, /^created user op@example\.test \([0-9a-f-]{36}\) with balance \$12\.500000000\n$/);
  t.equal(await balance('op@example.test'), 12_500_000_000n);
  const [dep] = await s.sql<{ method: string; credit_nano: bigint }[]>`
    SELECT d.method, d.credit_nano FROM deposits d JOIN users u ON u.id = d.user_id WHERE u.email = 'op@example.test'`;
  t.same({ ...dep }, { method: 'operator', credit_nano: 12_500_000_000n }, 'the opening balance is a deposit');
  t.equal(plain.code, 0, plain.stderr);
  t.equal(await balance('plain@example.test'), 0n);
  const [pw] = await s.sql<
    { password_hash: string; email_verified_at: Date }[]
  >`SELECT password_hash, email_verified_at FROM users WHERE email = 'plain@example.test'`;
  t.ok(pw.password_hash && !pw.password_hash.includes('hunter2'), 'the password is stored hashed');
  t.ok(pw.email_verified_at, 'operator users are verified');
  failsWith(t, noEmail, /--email is required/, 'missing --email');
  failsWith(t, badAmount, /--balance-usd must be a non-negative USD amount/, 'bad amount');
  t.equal(await balance('x@example.test'), undefined, 'a refused command creates nothing');

  // The hot balance is loaded: a credit from another process must reach it.
  const ledger = new Ledger(s.sql, s.hot, { ttlMs: 60_000, outboxMax: 0 });
  const [{ id: opId }] = await s.sql<{ id: string }[]>`SELECT id FROM users WHERE email = 'op@example.test'`;
  t.equal((await ledger.balance(opId)).balance, 12_500_000_000n);

  const [credited, key, dup, unknownUser, badUsd] = await Promise.all([
    runCli(['user', 'credit', '--email', 'op@example.test', '--usd', '0.000000001'], env, 30_000, BIN),
    runCli(['key', 'create', '--email', 'OP@example.test', '--name', 'ci runner'], env, 30_000, BIN),
    runCli(['user', 'create', '--email', 'op@example.test'], env, 30_000, BIN),
    runCli(['user', 'credit', '--email', 'nobody@example.test', '--usd', '1'], env, 30_000, BIN),
    runCli(['user', 'credit', '--email', 'op@example.test', '--usd', '1.0000000001'], env, 30_000, BIN),
  ]);
  t.equal(credited.code, 0, credited.stderr);
  t.match(credited.stdout, /credited \$0\.000000001 to op@example\.test; balance \$12\.500000001/);
  t.equal(await balance('op@example.test'), 12_500_000_001n);
  t.equal((await ledger.balance(opId)).balance, 12_500_000_001n, 'the shared hot balance was credited too');

  t.equal(key.code, 0, key.stderr);
  const out = lines(key.stdout);
  const last = out.at(-1)!;
  t.match(last, KEY_RE, 'the key is the last stdout line');
  const [row] = await s.sql<
    { name: string; user_id: string }[]
  >`SELECT name, user_id FROM api_keys WHERE key_hash = ${hashSecret(last)}`;
  t.same({ ...row }, { name: 'ci runner', user_id: opId }, 'stored by its hash, for that user');
  t.notOk(
    out.slice(0, -1).some((l) => l.includes(last)),
    'and printed only once',
  );

  failsWith(t, dup, /a user with email op@example\.test already exists/, 'duplicate user');
  failsWith(t, unknownUser, /no user with email nobody@example\.test/, 'credit to an unknown user');
  failsWith(t, badUsd, /--usd must be a non-negative USD amount with at most 9 decimals/, 'too many decimals');
  t.equal(await balance('op@example.test'), 12_500_000_001n, 'no refused command moved money');

  const ok = await runCli(['reconcile'], env, 30_000, BIN);
  t.equal(ok.code, 0, ok.stderr);
  t.equal(
    ok.stdout,
    '2 users checked, 0 mismatches; 1 hot accounts checked, 0 mismatches; 0 usage records waiting in the outbox\n',
    'Postgres and the loaded hot account agree',
  );

  await s.sql`UPDATE users SET balance_nano = balance_nano + 7 WHERE email = 'plain@example.test'`;
  const bad = await runCli(['reconcile'], env, 30_000, BIN);
  failsWith(t, bad, /the ledger does not reconcile/, 'reconcile with a mismatch');
  t.match(
    bad.stdout,
    /MISMATCH plain@example\.test: balance \$0\.000000007 ≠ credits \$0\.000000000 − charges \$0\.000000000/,
  );
  t.match(bad.stdout, /2 users checked, 1 mismatches/);

  // The hot store is compared too: a hot balance that drifted from Postgres is reported.
  await s.sql`UPDATE users SET balance_nano = balance_nano - 7 WHERE email = 'plain@example.test'`;
  await s.hot.credit(opId, 5n, 1_000n);
  const drift = await runCli(['reconcile'], env, 30_000, BIN);
  failsWith(t, drift, /the ledger does not reconcile/, 'reconcile with a hot mismatch');
  t.match(
    drift.stdout,
    /HOT MISMATCH op@example\.test: redis balance \$12\.500000006 ≠ Postgres balance − charges waiting in the outbox = \$12\.500000001/,
  );
});

t.test('unusable stores or port: exit 1 with one line, no password, no hang', async (t) => {
  const s = await testStores(t);
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  const taken = (holder.address() as AddressInfo).port;
  const started = Date.now();
  const [noPg, noRedis, busyPort] = await Promise.all([
    runCli(['migrate'], childEnv({ DATABASE_URL: 'postgres://postgres:s3cret-pw@127.0.0.1:1/x', REDIS_URL })),
    runCli(['reconcile'], childEnv({ DATABASE_URL: s.databaseUrl, REDIS_URL: 'redis://:s3cret-pw@127.0.0.1:1' })),
    runCli(
      ['serve'],
      childEnv({
        DATABASE_URL: s.databaseUrl,
        REDIS_URL,
        REDIS_PREFIX: s.redisPrefix,
        HOST: '127.0.0.1',
        PORT: String(taken),
      }),
    ),
  ]);
  failsWith(t, noPg, /^airouter: cannot use Postgres at 127\.0\.0\.1:1\/x: connect ECONNREFUSED/, 'Postgres down');
  failsWith(t, noRedis, /^airouter: cannot use Redis at 127\.0\.0\.1:1: connect ECONNREFUSED/, 'Redis down');
  failsWith(
    t,
    busyPort,
    new RegExp(`^airouter: cannot listen on 127\\.0\\.0\\.1:${taken} \\(port in use\\?\\)`),
    'port in use',
  );
  for (const r of [noPg, noRedis]) t.notMatch(r.stderr, /s3cret/, "the URL's password is not printed");
  t.ok(Date.now() - started < 20_000, 'none of them hangs');
});

t.test('embedded default: first-start key, data directory lock, persistence', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'airouter-embedded-'));
  // No DATABASE_URL, no REDIS_URL: PGlite and the in-process hot store.
  const env = childEnv({ DATA_DIR: dataDir });

  const first = await startServe(t, env, 60_000);
  const keyLines = lines(first.stdout()).filter((l) => KEY_RE.test(l));
  t.equal(keyLines.length, 1, 'one first-start key printed');
  const key = keyLines[0];
  t.match(first.stdout(), /First start on the embedded store/);

  const models = await fetch(`${first.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  t.equal(models.status, 200, 'the first-start key works');
  t.ok(((await models.json()) as { data: unknown[] }).data.length > 0, 'models are listed');
  const ready = await fetch(`${first.url}/readyz`);
  t.equal(ready.status, 200);
  t.same(await ready.json(), { status: 'ready' }, 'no details without METRICS_TOKEN');

  // The running gateway answers the command (test/admin/cli-running-*.test.ts cover them all).
  const served = await runCli(['user', 'create', '--email', 'x@y'], env);
  t.equal(served.code, 0, `CLI while serving: ${served.stderr}`);
  const second0 = await runCli(['serve'], env);
  failsWith(
    t,
    second0,
    new RegExp(
      `the embedded database in ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by process ${first.proc.pid} \\(a running gateway\\)`,
    ),
    'a second gateway while serving',
  );

  t.same(await first.stop('SIGTERM'), { code: 0, signal: null }, 'SIGTERM: exit 0');

  const second = await startServe(t, env, 60_000);
  t.notMatch(second.stdout(), /First start/, 'no second first-start');
  t.equal(lines(second.stdout()).filter((l) => KEY_RE.test(l)).length, 0, 'no new key printed');
  const again = await fetch(`${second.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  t.equal(again.status, 200, 'the old key still works: the data persisted');
  await again.arrayBuffer();
  t.same(await second.stop('SIGTERM'), { code: 0, signal: null });

  // With the gateway gone the data directory is free for the CLI.
  const rec = await runCli(['reconcile'], env);
  t.equal(rec.code, 0, rec.stderr);
  t.equal(
    rec.stdout,
    '2 users checked, 0 mismatches; 0 hot accounts checked, 0 mismatches; 0 usage records waiting in the outbox\n',
    "the first-start user's credit reconciles",
  );
});
