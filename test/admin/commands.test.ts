// The operator's commands run in this process, on real stores, through the control socket a
// gateway serves them on: what each does to the books, what it says, and what it refuses. (The
// same commands against running gateway processes are in cli-running-*.test.ts; those processes
// record no coverage, so the commands' own code is exercised here too.)

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { findUserByEmail } from '../../src/accounts/users.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { parseArgs } from '../../src/cli/args.js';
import { controlRunner } from '../../src/cli/commands.js';
import { runInGateway, serveControl, socketPath } from '../../src/cli/control.js';
import { testCatalogue } from '../helpers/gateway.js';
import { testStores } from '../helpers/stores.js';

const stores = await testStores(t);
const dir = mkdtempSync(path.join(tmpdir(), 'airouter-cmd-'));
const configPath = path.join(dir, 'gateway.config.json');
writeFileSync(configPath, JSON.stringify(testCatalogue({ upstream: 'http://127.0.0.1:9' })));
const run = controlRunner(stores, { configPath });
const STORES = 'test-stores';
const control = await serveControl(dir, STORES, run, () => {});
t.teardown(() => control?.close());

/** A command through the socket, as the command line sends it to a running gateway. */
async function cmd(...argv: string[]): Promise<{ ok: boolean; lines: string[]; error?: string }> {
  const lines: string[] = [];
  try {
    const answered = await runInGateway(dir, STORES, argv, (l) => lines.push(l));
    return { ok: answered, lines };
  } catch (err) {
    return { ok: false, lines, error: (err as Error).message };
  }
}

t.test('flags and words', async (t) => {
  t.same(parseArgs(['user', 'create', '--email', 'a@b.c', '--admin', '--usd=5']), {
    words: ['user', 'create'],
    flags: { email: 'a@b.c', admin: 'true', usd: '5' },
  });
});

t.test('users: create, credit, debit, roles, disable, password, keys; the books stay exact', async (t) => {
  t.ok(control, 'the control socket is served');
  t.match(
    (await cmd('user', 'create', '--email', 'op@example.test', '--balance-usd', '2.5')).lines[0],
    /created user op@example.test .* with balance \$2\.500000000/,
  );
  t.match((await cmd('user', 'create', '--email', 'op@example.test')).error, /already exists/);
  t.match(
    (await cmd('user', 'create', '--email', 'boss@example.test', '--admin')).lines[0],
    /created admin boss@example.test/,
  );
  t.match(
    (await cmd('user', 'credit', '--email', 'op@example.test', '--usd', '1', '--reason', 'goodwill')).lines[0],
    /credited \$1\.000000000 .* balance \$3\.500000000/,
  );
  t.match((await cmd('user', 'credit', '--email', 'op@example.test', '--usd', '0')).error, /more than 0/);
  t.match((await cmd('user', 'credit', '--email', 'nobody@example.test', '--usd', '1')).error, /no user with email/);
  t.match(
    (await cmd('user', 'debit', '--email', 'op@example.test', '--usd', '0.5', '--reason', 'refund')).lines[0],
    /debited \$0\.500000000 .* balance \$3\.000000000/,
  );
  t.match(
    (await cmd('user', 'debit', '--email', 'op@example.test', '--usd', '100', '--reason', 'x')).error,
    /below zero/,
  );
  t.match((await cmd('user', 'promote', '--email', 'op@example.test')).lines[0], /now an admin/);
  t.match((await cmd('user', 'demote', '--email', 'op@example.test')).lines[0], /no longer an admin/);
  t.match(
    (await cmd('user', 'disable', '--email', 'op@example.test', '--reason', 'abuse')).lines[0],
    /disabled op@example.test/,
  );
  t.match((await cmd('user', 'enable', '--email', 'op@example.test')).lines[0], /enabled op@example.test/);
  const pw = await cmd('user', 'password', '--email', 'op@example.test');
  t.match(pw.lines[0], /shown once/);
  t.ok(pw.lines[1] && pw.lines[1].length >= 12, 'a generated password');
  const key = await cmd('key', 'create', '--email', 'op@example.test', '--name', 'ci');
  t.match(key.lines[1], /^ar-[A-Za-z0-9]{40}$/);
  const user = await findUserByEmail(stores.sql, 'op@example.test');
  t.equal(user?.balance_nano, 3_000_000_000n, 'the balance is exactly what was credited and debited');
  const rec = await cmd('reconcile');
  t.match(rec.lines.at(-1), /0 mismatches; .* 0 mismatches/);
  t.equal((await reconcile(stores.sql, stores.hot)).ok, true);
});

t.test('codes, the catalogue, deposits, and what is refused', async (t) => {
  const future = new Date(Date.now() + 86_400_000).toISOString();
  const codes = await cmd('codes', 'create', '--count', '2', '--usd', '1', '--expires', future);
  t.match(codes.lines[0], /created 2 codes of \$1\.000000000/);
  t.equal(codes.lines.length, 3, 'the codes follow, one a line');
  t.match((await cmd('codes', 'create', '--count', '0', '--usd', '1', '--expires', future)).error, /--count/);
  t.match(
    (await cmd('codes', 'create', '--count', '1', '--usd', '1', '--expires', '2000-01-01')).error,
    /in the future/,
  );
  const exported = await cmd('catalogue', 'export');
  const doc = JSON.parse(exported.lines.join('\n'));
  t.ok(
    doc.models.some((m: { id: string }) => m.id === 'oa-model'),
    'the file catalogue, before any is saved',
  );
  const file = path.join(dir, 'import.json');
  writeFileSync(file, JSON.stringify(doc));
  t.match((await cmd('catalogue', 'import', '--file', file)).lines[0], /saved catalogue version \d+/);
  writeFileSync(file, '{not json');
  t.match((await cmd('catalogue', 'import', '--file', file)).error, /cannot read it as JSON/);
  writeFileSync(file, JSON.stringify({ providers: [], models: [{ id: 'x' }] }));
  t.ok((await cmd('catalogue', 'import', '--file', file)).error, 'an invalid catalogue is refused');
  t.match((await cmd('deposit', 'confirm', '00000000-0000-4000-8000-000000000000')).error, /no deposit/);
  t.match((await cmd('deposit', 'confirm', 'nope')).error, /not a deposit id/);
  t.match((await cmd('deposit', 'confirm')).error, /usage/);
  t.match((await cmd('serve')).error, /already running/);
  t.match((await cmd('frobnicate')).error, /unknown command/);
  t.equal((await cmd('migrate')).lines[0], 'migrations applied; schema is up to date');
});

t.test('the socket answers only for its own stores, and only to well-formed requests', async (t) => {
  const lines: string[] = [];
  t.equal(
    await runInGateway(dir, 'other-stores', ['migrate'], (l) => lines.push(l)),
    false,
    'another store set: the caller opens its own',
  );
  t.equal(
    await runInGateway(path.join(dir, 'nowhere'), STORES, ['migrate'], (l) => lines.push(l)),
    false,
    'no gateway: false',
  );
  t.same(lines, []);
  t.equal(
    await serveControl(dir, STORES, run, () => {}),
    null,
    'a second gateway on the same data directory does not take the socket',
  );
  t.ok(socketPath(dir).endsWith('airouter.sock'));
});
