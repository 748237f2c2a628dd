// Issue 33: every command of the command line works while the gateway runs on the embedded
// default (`npm start`, the bundle), through the gateway's control socket. The seeded admin can
// sign in with the password start printed. (Postgres and Redis with two workers:
// cli-running-stores.test.ts; the two were one file, which outgrew tap's per-file timeout on
// two busy cores.)

import t from 'tap';
import { createConnection } from 'node:net';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runInGateway, socketPath, storesOf } from '../../src/cli/control.js';
import { childEnv, lines, runCli, startServe } from '../helpers/child.js';
import { everyCommand, fails, getFresh, KEY_RE, ok, post } from '../helpers/operator.js';
import { QRIS_NOTIFY_SECRET, STATIC_QRIS } from '../helpers/payments.js';
import { nanoToUsd, usdToNano } from '../../src/billing/money.js';

t.test('embedded (`npm start`): every command runs inside the running gateway', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'airouter-op-'));
  // QRIS from the merchant's own code: a deposit the operator confirms by hand.
  const env = childEnv({
    DATA_DIR: dataDir,
    QRIS_MODE: 'merchant',
    QRIS_STATIC_PAYLOAD: STATIC_QRIS,
    QRIS_NOTIFY_SECRET,
    IDR_PER_USD: '16250',
  });
  const gw = await startServe(t, env, 60_000);
  const cli = (args: string[]) => runCli(args, env);

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
  t.match(
    confirmed[0],
    new RegExp(
      `^confirmed deposit ${topup.json.id} \\(qris, .* IDR\\): credited \\$${topup.json.credit_usd.replace('.', '\\.')} to op@example\\.test`,
    ),
  );
  const after = (await fetch(`${gw.url}/api/dashboard/balance`, {
    headers: { authorization: `Bearer ${session}` },
  }).then((r) => r.json())) as { balance_usd: string };
  t.equal(
    after.balance_usd,
    nanoToUsd(3_500_000_001n + usdToNano(topup.json.credit_usd)),
    "the serving gateway's balance has the deposit, exactly",
  );
  fails(t, await cli(['deposit', 'confirm', topup.json.id]), /is already paid/, 'a second confirm');

  // The in-process hot store is the gateway's: disabling stops the key there at once.
  ok(t, await cli(['user', 'disable', '--email', 'op@example.test', '--reason', 'abuse']), 'disable');
  t.equal(await getFresh(`${gw.url}/v1/models`, auth), 401, "a disabled user's key stops");
  ok(t, await cli(['user', 'enable', '--email', 'op@example.test']), 'enable');
  t.equal(await getFresh(`${gw.url}/v1/models`, auth), 200, 'and works again once enabled');

  const rec = await cli(['reconcile']);
  t.same(ok(t, rec, 'reconcile'), [
    '3 users checked, 0 mismatches; 1 hot accounts checked, 0 mismatches; 0 usage records waiting in the outbox',
  ]);

  // Once node is up, a command is one round trip to the gateway: under a second where opening
  // the data directory itself takes 1.3 s on a quiet machine (and the suite's load slows both).
  for (const argv of [
    ['reconcile'],
    ['user', 'credit', '--email', 'boss@example.test', '--usd', '1'],
    ['key', 'create', '--email', 'boss@example.test'],
  ]) {
    const started = performance.now();
    const got: string[] = [];
    t.ok(
      await runInGateway(dataDir, storesOf({ dataDir }), argv, (l) => got.push(l)),
      `${argv[0]}: answered by the gateway`,
    );
    const ms = performance.now() - started;
    t.ok(ms < 1000, `${argv.join(' ')} took ${ms.toFixed(0)} ms`);
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
  t.same(ok(t, await cli(['reconcile']), 'reconcile, gateway stopped'), [
    '3 users checked, 0 mismatches; 0 hot accounts checked, 0 mismatches; 0 usage records waiting in the outbox',
  ]);
});
