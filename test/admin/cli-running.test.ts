// Issue 33: every command of the command line works while the gateway runs: on the embedded
// default (`npm start`, the bundle) through the gateway's control socket, and on Postgres and
// Redis with two workers. The seeded admin can sign in with the password start printed.

import t, { type Test } from 'tap';
import http from 'node:http';
import { createConnection } from 'node:net';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildFiles, buildServer } from '../../build/server.js';
import { runInGateway, socketPath, storesOf } from '../../src/cli/control.js';
import { childEnv, lines, REPO_ROOT, runCli, startServe, waitFor, type CliResult } from '../helpers/child.js';
import { REDIS_URL, testDatabase, testRedisPrefix } from '../helpers/stores.js';
import postgres from 'postgres';
import { QRIS_NOTIFY_SECRET, STATIC_QRIS } from '../helpers/payments.js';
import { nanoToUsd, usdToNano } from '../../src/billing/money.js';

const KEY_RE = /^ar-[0-9A-Za-z]{40}$/;

/** One request on a fresh connection, so the kernel may hand it to any worker. */
function getFresh(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', reject);
  });
}

async function post(url: string, body: unknown, token?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json().catch(() => undefined) };
}

function ok(t: Test, r: CliResult, what: string): string[] {
  t.equal(r.code, 0, `${what}: exit 0 (${r.stderr.trim()})`);
  return lines(r.stdout);
}

function fails(t: Test, r: CliResult, re: RegExp, what: string) {
  t.equal(r.code, 1, `${what}: exit 1`);
  t.equal(lines(r.stderr).length, 1, `${what}: one line on stderr`);
  t.match(r.stderr, re, what);
}

/** The commands every gateway must answer while it runs; returns the operator user's key. */
async function everyCommand(t: Test, cli: (args: string[]) => Promise<CliResult>, url: string) {
  ok(t, await cli(['migrate']), 'migrate');
  t.match(ok(t, await cli(['user', 'create', '--email', 'op@example.test', '--balance-usd', '3', '--password', 'op password 123']), 'user create')[0], /^created user op@example\.test \(/);
  t.match(ok(t, await cli(['user', 'create', '--email', 'boss@example.test', '--admin']), 'user create --admin')[0], /^created admin boss@example\.test/);
  fails(t, await cli(['user', 'create', '--email', 'op@example.test']), /a user with email op@example\.test already exists/, 'duplicate');
  t.same(ok(t, await cli(['user', 'credit', '--email', 'op@example.test', '--usd', '2.000000001']), 'user credit'), ['credited $2.000000001 to op@example.test; balance $5.000000001']);
  t.same(ok(t, await cli(['user', 'debit', '--email', 'op@example.test', '--usd', '1.5', '--reason', 'refund reversed']), 'user debit'), ['debited $1.500000000 from op@example.test; balance $3.500000001']);
  fails(t, await cli(['user', 'debit', '--email', 'op@example.test', '--usd', '4']), /--reason is required/, 'a debit needs a reason');
  fails(t, await cli(['user', 'debit', '--email', 'op@example.test', '--usd', '4', '--reason', 'x']), /the balance is \$3\.500000001; a debit of \$4\.000000000 would take it below zero/i, 'a debit past the balance');
  t.same(ok(t, await cli(['user', 'promote', '--email', 'op@example.test']), 'promote'), ['op@example.test is now an admin']);
  t.same(ok(t, await cli(['user', 'demote', '--email', 'op@example.test']), 'demote'), ['op@example.test is no longer an admin']);
  const keyOut = ok(t, await cli(['key', 'create', '--email', 'op@example.test', '--name', 'ci']), 'key create');
  const key = keyOut.at(-1)!;
  t.match(key, KEY_RE, 'the key is the last line');
  const auth = { authorization: `Bearer ${key}` };
  t.equal(await getFresh(`${url}/v1/models`, auth), 200, 'the new key works at once');

  const pw = ok(t, await cli(['user', 'password', '--email', 'op@example.test']), 'user password');
  t.equal(pw.length, 2, 'the generated password is printed');
  const login = await post(`${url}/api/dashboard/login`, { email: 'op@example.test', password: pw[1] });
  t.equal(login.status, 200, 'and signs in');
  const balance = (await fetch(`${url}/api/dashboard/balance`, { headers: { authorization: `Bearer ${login.json.token}` } }).then((r) => r.json())) as { balance_usd: string };
  t.equal(balance.balance_usd, '3.500000001', 'the serving gateway sees every credit and debit');

  ok(t, await cli(['deposit', 'confirm', '--help']), 'help');
  fails(t, await cli(['deposit', 'confirm', '00000000-0000-4000-8000-000000000000']), /no deposit 00000000-0000-4000-8000-000000000000/, 'deposit confirm of an unknown id');
  return { key, auth, session: login.json.token as string };
}

t.test('embedded (`npm start`): every command runs inside the running gateway', async (t) => {
  const bundle = path.join(REPO_ROOT, 'dist', `test-cli-${process.pid}.js`);
  t.teardown(() => {
    for (const f of buildFiles(bundle)) rmSync(f, { force: true });
  });
  await buildServer(bundle);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'airouter-op-'));
  // QRIS from the merchant's own code: a deposit the operator confirms by hand.
  const env = childEnv({ DATA_DIR: dataDir, QRIS_MODE: 'merchant', QRIS_STATIC_PAYLOAD: STATIC_QRIS, QRIS_NOTIFY_SECRET, IDR_PER_USD: '16250' });
  const gw = await startServe(t, env, 60_000, bundle);
  const cli = (args: string[]) => runCli(args, env, 30_000, bundle);

  // The seeded admin: an address the dashboard accepts, and the printed password signs in.
  const out = gw.stdout();
  t.match(out, /created the admin admin@airouter\.localhost/);
  const password = /password \(shown once\): (\S+)/.exec(out)?.[1];
  t.ok(password, 'a password is printed');
  const login = await post(`${gw.url}/api/dashboard/login`, { email: 'admin@airouter.localhost', password });
  t.equal(login.status, 200, 'the seeded user signs in');
  t.equal(lines(out).filter((l) => KEY_RE.test(l)).length, 1, 'and its key is printed');
  t.equal(statSync(socketPath(dataDir)).mode & 0o777, 0o600, 'the control socket is private to its owner');

  const { auth, session } = await everyCommand(t, cli, gw.url);
  const topup = await post(`${gw.url}/api/dashboard/topup/qris`, { amount_idr: 50000 }, session);
  t.equal(topup.status, 201, JSON.stringify(topup.json));
  const confirmed = ok(t, await cli(['deposit', 'confirm', topup.json.id, '--reference', 'bank-1']), 'deposit confirm');
  t.match(confirmed[0], new RegExp(`^confirmed deposit ${topup.json.id} \\(qris, .* IDR\\): credited \\$${topup.json.credit_usd.replace('.', '\\.')} to op@example\\.test`));
  const after = (await fetch(`${gw.url}/api/dashboard/balance`, { headers: { authorization: `Bearer ${session}` } }).then((r) => r.json())) as { balance_usd: string };
  t.equal(after.balance_usd, nanoToUsd(3_500_000_001n + usdToNano(topup.json.credit_usd)), 'the serving gateway\'s balance has the deposit, exactly');
  fails(t, await cli(['deposit', 'confirm', topup.json.id]), /is already paid/, 'a second confirm');

  // The in-process hot store is the gateway's: disabling stops the key there at once.
  ok(t, await cli(['user', 'disable', '--email', 'op@example.test', '--reason', 'abuse']), 'disable');
  t.equal(await getFresh(`${gw.url}/v1/models`, auth), 401, 'a disabled user\'s key stops');
  ok(t, await cli(['user', 'enable', '--email', 'op@example.test']), 'enable');
  t.equal(await getFresh(`${gw.url}/v1/models`, auth), 200, 'and works again once enabled');

  const rec = await cli(['reconcile']);
  t.same(ok(t, rec, 'reconcile'), ['3 users checked, 0 mismatches; 1 hot accounts checked, 0 mismatches; 0 usage records waiting in the outbox']);

  // Once node is up, a command is one round trip to the gateway.
  for (const argv of [['reconcile'], ['user', 'credit', '--email', 'boss@example.test', '--usd', '1'], ['key', 'create', '--email', 'boss@example.test']]) {
    const started = performance.now();
    const got: string[] = [];
    t.ok(await runInGateway(dataDir, storesOf({ dataDir }), argv, (l) => got.push(l)), `${argv[0]}: answered by the gateway`);
    const ms = performance.now() - started;
    t.ok(ms < 500, `${argv.join(' ')} took ${ms.toFixed(0)} ms`);
  }
  fails(t, await cli(['serve']), /is in use by process/, 'a second gateway on the same data directory');

  // A client that connects and says nothing does not hold the gateway's stop.
  const idle = createConnection(socketPath(dataDir));
  idle.on('error', () => {});
  await new Promise((resolve) => idle.once('connect', resolve));
  const stopping = Date.now();
  t.same(await gw.stop('SIGTERM', 15_000), { code: 0, signal: null });
  t.ok(Date.now() - stopping < 10_000, `stopped in ${Date.now() - stopping} ms with an idle control connection open`);
  idle.destroy();
  t.throws(() => statSync(socketPath(dataDir)), 'the socket goes with the gateway');
  // Without a gateway the command opens the store itself, as before.
  t.same(ok(t, await cli(['reconcile']), 'reconcile, gateway stopped'), ['3 users checked, 0 mismatches; 0 hot accounts checked, 0 mismatches; 0 usage records waiting in the outbox']);
});

t.test('Postgres and Redis, two workers: every command while serving; a disabled user\'s key stops on both workers within a second', async (t) => {
  const databaseUrl = await testDatabase(t);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'airouter-op2-'));
  const env = childEnv({ DATABASE_URL: databaseUrl, REDIS_URL, REDIS_PREFIX: testRedisPrefix(t), WORKERS: '2', DATA_DIR: dataDir });
  const gw = await startServe(t, env, 60_000);
  const cli = (args: string[]) => runCli(args, env);
  const { auth, session } = await everyCommand(t, cli, gw.url);
  // Codes and the catalogue file, from the command line, in force on both workers.
  const made = ok(t, await cli(['codes', 'create', '--count', '2', '--usd', '0.5', '--expires', '2999-01-01']), 'codes create');
  t.match(made[0], /^created 2 codes of \$0\.500000000 each, valid until 2999-01-01T00:00:00\.000Z/);
  t.equal(made.length, 3, 'the codes follow');
  const redeemed = await post(`${gw.url}/api/dashboard/redeem`, { code: made[1] }, session);
  t.same(redeemed.json?.credited_usd, '0.500000000', 'a code made at the command line redeems');
  const exported = JSON.parse((await cli(['catalogue', 'export'])).stdout) as { models: { id: string; enabled?: boolean }[] };
  const off = exported.models[0].id;
  exported.models[0].enabled = false;
  const file = path.join(dataDir, 'catalogue.json');
  writeFileSync(file, JSON.stringify(exported));
  t.match(ok(t, await runCli(['catalogue', 'import', '--file', path.relative(REPO_ROOT, file)], env), 'catalogue import (a relative path)')[0], /^saved catalogue version 1;/);
  await waitFor(async () => {
    for (let i = 0; i < 12; i++) {
      const r = await fetch(`${gw.url}/v1/models`, { headers: auth }).then((x) => x.json() as Promise<{ data: { id: string }[] }>);
      if (r.data.some((m) => m.id === off)) return false;
    }
    return true;
  }, 2000, 20);
  t.pass(`${off} is out of service on both workers`);
  writeFileSync(file, '{"providers": [], "models": [{"id": "x"}]}');
  fails(t, await cli(['catalogue', 'import', '--file', file]), /models\[0\]/, 'a broken catalogue is refused');


  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  const [{ id: opId }] = await sql<{ id: string }[]>`SELECT id FROM users WHERE email = 'op@example.test'`;
  const [dep] = await sql<{ id: string }[]>`
    INSERT INTO deposits (user_id, method, status, amount, currency, credit_nano, provider, expires_at)
    VALUES (${opId}, 'qris', 'pending', 15000, 'IDR', 1000000000, 'qris', now() + interval '1 hour') RETURNING id`;
  t.match(ok(t, await cli(['deposit', 'confirm', dep.id, '--reference', 'bank-123']), 'deposit confirm')[0], /credited \$1\.000000000 to op@example\.test; balance \$5\.000000001/);

  // Both workers have the key cached.
  for (let i = 0; i < 24; i++) t.equal(await getFresh(`${gw.url}/v1/models`, auth), 200);
  ok(t, await cli(['user', 'disable', '--email', 'op@example.test']), 'disable');
  const disabledAt = Date.now();
  await waitFor(async () => {
    for (let i = 0; i < 24; i++) if ((await getFresh(`${gw.url}/v1/models`, auth)) !== 401) return false;
    return true;
  }, 1000, 10);
  t.ok(Date.now() - disabledAt <= 1000, 'every fresh connection (both workers) refuses the key within a second');
  ok(t, await cli(['user', 'enable', '--email', 'op@example.test']), 'enable');
  await waitFor(async () => {
    for (let i = 0; i < 24; i++) if ((await getFresh(`${gw.url}/v1/models`, auth)) !== 200) return false;
    return true;
  }, 6000, 50);
  t.pass('the key works again on both workers');

  // Another database beside the same DATA_DIR: the command must not run on the gateway's stores.
  const elsewhere = childEnv({ ...env, DATABASE_URL: await testDatabase(t) });
  t.same(ok(t, await runCli(['reconcile'], elsewhere), 'reconcile on other stores'), ['0 users checked, 0 mismatches; 0 hot accounts checked, 0 mismatches; 0 usage records waiting in the outbox'], 'runs on its own stores, not the gateway\'s');
  t.same(ok(t, await cli(['reconcile']), 'reconcile'), ['2 users checked, 0 mismatches; 1 hot accounts checked, 0 mismatches; 0 usage records waiting in the outbox']);
  const audit = await sql<{ actor: string; action: string; target: string }[]>`SELECT actor, action, target FROM admin_audit ORDER BY id`;
  t.same(audit.map((a) => a.action), ['user.create', 'user.create', 'user.promote', 'user.debit', 'user.promote', 'user.demote', 'user.password', 'codes.create', 'catalogue.import', 'deposit.confirm', 'user.disable', 'user.enable'], 'every operator action is in the audit log');
  t.ok(audit.every((a) => a.actor.startsWith('cli:')), 'as the command line');
  t.same(await gw.stop('SIGTERM'), { code: 0, signal: null });
});
