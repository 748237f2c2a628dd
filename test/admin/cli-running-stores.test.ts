// Issue 33: every command of the command line works while the gateway runs on Postgres and
// Redis with two workers, and what it changes (a disabled user, the catalogue) is in force on
// both workers. (The embedded default: cli-running-embedded.test.ts.)

import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { childEnv, heldAfter, REPO_ROOT, runCli, startServe, waitFor } from '../helpers/child.js';
import { everyCommand, fails, getFresh, ok, post } from '../helpers/operator.js';
import { REDIS_URL, testDatabase, testRedisPrefix } from '../helpers/stores.js';

t.test(
  "Postgres and Redis, two workers: every command while serving; a disabled user's key stops on both workers within a second",
  async (t) => {
    const databaseUrl = await testDatabase(t);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'airouter-op2-'));
    const env = childEnv({
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_PREFIX: testRedisPrefix(t),
      WORKERS: '2',
      DATA_DIR: dataDir,
    });
    // Through the bundle, as `npm start` runs it (test/helpers/bundle.ts).
    const gw = await startServe(t, env, 60_000);
    const cli = (args: string[]) => runCli(args, env);
    const { auth, session } = await everyCommand(t, cli, gw.url);
    // Codes and the catalogue file, from the command line, in force on both workers.
    const made = ok(
      t,
      await cli(['codes', 'create', '--count', '2', '--usd', '0.5', '--expires', '2999-01-01']),
      'codes create',
    );
    t.match(made[0], /^created 2 codes of \$0\.500000000 each, valid until 2999-01-01T00:00:00\.000Z/);
    t.equal(made.length, 3, 'the codes follow');
    const redeemed = await post(`${gw.url}/api/dashboard/redeem`, { code: made[1] }, session);
    t.same(redeemed.json?.credited_usd, '0.500000000', 'a code made at the command line redeems');
    const exported = JSON.parse((await cli(['catalogue', 'export'])).stdout) as {
      models: { id: string; enabled?: boolean }[];
    };
    const off = exported.models[0].id;
    exported.models[0].enabled = false;
    const file = path.join(dataDir, 'catalogue.json');
    writeFileSync(file, JSON.stringify(exported));
    t.match(
      ok(
        t,
        await cli(['catalogue', 'import', '--file', path.relative(REPO_ROOT, file)]),
        'catalogue import (a relative path)',
      )[0],
      /^saved catalogue version 1;/,
    );
    await waitFor(
      async () => {
        for (let i = 0; i < 12; i++) {
          const r = await fetch(`${gw.url}/v1/models`, { headers: auth }).then(
            (x) => x.json() as Promise<{ data: { id: string }[] }>,
          );
          if (r.data.some((m) => m.id === off)) return false;
        }
        return true;
      },
      2000,
      20,
    );
    t.pass(`${off} is out of service on both workers`);
    writeFileSync(file, '{"providers": [], "models": [{"id": "x"}]}');
    fails(t, await cli(['catalogue', 'import', '--file', file]), /models\[0\]/, 'a broken catalogue is refused');

    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    t.teardown(() => sql.end());
    const [{ id: opId }] = await sql<{ id: string }[]>`SELECT id FROM users WHERE email = 'op@example.test'`;
    const [dep] = await sql<{ id: string }[]>`
    INSERT INTO deposits (user_id, method, status, amount, currency, credit_nano, provider, expires_at)
    VALUES (${opId}, 'qris', 'pending', 15000, 'IDR', 1000000000, 'qris', now() + interval '1 hour') RETURNING id`;
    t.match(
      ok(t, await cli(['deposit', 'confirm', dep.id, '--reference', 'bank-123']), 'deposit confirm')[0],
      /credited \$1\.000000000 to op@example\.test; balance \$5\.000000001/,
    );

    // Both workers have the key cached.
    for (let i = 0; i < 24; i++) t.equal(await getFresh(`${gw.url}/v1/models`, auth), 200);
    ok(t, await cli(['user', 'disable', '--email', 'op@example.test']), 'disable');
    const disabledAt = Date.now();
    const refusedAfter = await heldAfter(disabledAt, async () => {
      for (let i = 0; i < 24; i++) if ((await getFresh(`${gw.url}/v1/models`, auth)) !== 401) return false;
      return true;
    });
    t.ok(
      refusedAfter <= 1000,
      `every fresh connection (both workers) refuses the key within a second (${refusedAfter} ms)`,
    );
    ok(t, await cli(['user', 'enable', '--email', 'op@example.test']), 'enable');
    await waitFor(
      async () => {
        for (let i = 0; i < 24; i++) if ((await getFresh(`${gw.url}/v1/models`, auth)) !== 200) return false;
        return true;
      },
      6000,
      50,
    );
    t.pass('the key works again on both workers');

    // Another database beside the same DATA_DIR: the command must not run on the gateway's stores.
    const elsewhere = childEnv({ ...env, DATABASE_URL: await testDatabase(t) });
    t.same(
      ok(t, await runCli(['reconcile'], elsewhere), 'reconcile on other stores'),
      ['0 users checked, 0 mismatches; 0 hot accounts checked, 0 mismatches; 0 usage records waiting in the outbox'],
      "runs on its own stores, not the gateway's",
    );
    t.same(ok(t, await cli(['reconcile']), 'reconcile'), [
      '2 users checked, 0 mismatches; 1 hot accounts checked, 0 mismatches; 0 usage records waiting in the outbox',
    ]);
    const audit = await sql<
      { actor: string; action: string; target: string }[]
    >`SELECT actor, action, target FROM admin_audit ORDER BY id`;
    t.same(
      audit.map((a) => a.action),
      [
        'user.create',
        'user.create',
        'user.promote',
        'user.debit',
        'user.promote',
        'user.demote',
        'user.password',
        'codes.create',
        'catalogue.import',
        'deposit.confirm',
        'user.disable',
        'user.enable',
      ],
      'every operator action is in the audit log',
    );
    t.ok(
      audit.every((a) => a.actor.startsWith('cli:')),
      'as the command line',
    );
    t.same(await gw.stop('SIGTERM'), { code: 0, signal: null });
  },
);
