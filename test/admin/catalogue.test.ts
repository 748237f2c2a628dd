// The catalogue edited by an admin: saved to Postgres, in force on every worker at once (no
// restart, no SIGHUP), exported and imported as the catalogue file, kept across a restart.

import t from 'tap';
import http from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { testCatalogue } from '../helpers/gateway.js';
import { childEnv, heldAfter, lines, runCli, startServe } from '../helpers/child.js';
import { REDIS_URL, testDatabase, testRedisPrefix } from '../helpers/stores.js';

/** One request on a fresh connection, so the kernel may hand it to either worker. */
function getFresh(url: string, headers: Record<string, string>): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false, headers }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: body ? JSON.parse(body) : undefined }));
      })
      .on('error', reject);
  });
}

t.test('catalogue edits are in force on both workers without a restart', async (t) => {
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const dir = mkdtempSync(path.join(tmpdir(), 'airouter-cat-'));
  const configPath = path.join(dir, 'gateway.config.json');
  writeFileSync(configPath, JSON.stringify(testCatalogue({ upstream: up.url })));
  const env = childEnv({
    DATABASE_URL: await testDatabase(t),
    REDIS_URL,
    REDIS_PREFIX: testRedisPrefix(t),
    WORKERS: '2',
    DATA_DIR: path.join(dir, 'data'),
    GATEWAY_CONFIG: configPath,
    FAKE_OPENAI_KEY: 'sk-fake-openai-provider-key-0001',
    FAKE_ANTHROPIC_KEY: 'sk-ant-fake-provider-key-0002',
  });
  let gw = await startServe(t, env, 60_000);
  const [adminMade, userMade] = await Promise.all([
    runCli(['user', 'create', '--email', 'root@example.test', '--password', 'root password 1', '--admin'], env),
    runCli(['user', 'create', '--email', 'u@example.test', '--balance-usd', '5'], env),
  ]);
  t.same([adminMade.code, userMade.code], [0, 0], adminMade.stderr + userMade.stderr);
  const key = lines((await runCli(['key', 'create', '--email', 'u@example.test'], env)).stdout).at(-1)!;
  const auth = { authorization: `Bearer ${key}` };
  const login = await fetch(`${gw.url}/api/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'root@example.test', password: 'root password 1' }),
  });
  const session = ((await login.json()) as { token: string }).token;
  const admin = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(`${gw.url}/api/admin${p}`, {
      method,
      headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, text: await r.text() };
  };
  const json = async (method: string, p: string, body?: unknown) => {
    const r = await admin(method, p, body);
    return { status: r.status, json: JSON.parse(r.text) };
  };
  /** What 24 fresh connections (both workers) see in /v1/models. */
  const everyWorker = async (check: (models: { id: string; pricing: { input: number } }[]) => boolean) => {
    for (let i = 0; i < 24; i++) {
      const r = await getFresh(`${gw.url}/v1/models`, auth);
      if (r.status !== 200 || !check(r.json.data)) return false;
    }
    return true;
  };

  const first = await json('GET', '/catalogue');
  t.equal(first.json.source, 'file', 'no saved catalogue yet: the file');
  t.equal(first.json.version, null);
  t.ok(await everyWorker((ms) => ms.some((m) => m.id === 'oa-model')));

  // Switch a model off.
  const off = await json('POST', '/catalogue/models/oa-model', { enabled: false });
  t.equal(off.status, 200, JSON.stringify(off.json));
  t.equal(off.json.source, 'postgres');
  t.notOk(
    off.json.in_service.some((m: { id: string }) => m.id === 'oa-model'),
    'out of service',
  );
  const savedAt = Date.now();
  const unlistedAfter = await heldAfter(savedAt, () => everyWorker((ms) => !ms.some((m) => m.id === 'oa-model')));
  t.ok(unlistedAfter < 2000, `both workers stopped listing it within ${unlistedAfter} ms`);
  const chat = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(chat.status, 404, 'a switched-off model is not served');
  await chat.arrayBuffer();

  // A price and the routes' order, with the upstream's cost per route.
  const priced = await json('POST', '/catalogue/models/fallback-model', {
    pricing: { input: 3, output: 6 },
    routes: [
      { provider: 'fake-openai', model: 'upstream-oa', upstream_pricing: { input: 1.5, output: 3 } },
      { provider: 'dead', model: 'x', enabled: false },
    ],
  });
  t.equal(priced.status, 200, JSON.stringify(priced.json));
  t.same(
    priced.json.in_service.find((m: { id: string }) => m.id === 'fallback-model').routes,
    ['fake-openai/upstream-oa'],
    'routes in the new order, the switched-off one out',
  );
  const pricedAfter = await heldAfter(Date.now(), () =>
    everyWorker((ms) => ms.find((m) => m.id === 'fallback-model')?.pricing.input === 3),
  );
  t.ok(pricedAfter < 2000, `the new price is on both workers within ${pricedAfter} ms`);

  // Refused documents change nothing.
  const version = priced.json.version;
  for (const [body, re] of [
    [{ pricing: { input: -1, output: 1 } }, /"pricing.input" must not be negative/],
    [{ routes: [{ provider: 'nowhere', model: 'x' }] }, /provider "nowhere" is not a listed provider/],
    [
      { routes: [{ provider: 'fake-openai', model: 'x', upstream_pricing: { input: 'cheap', output: 1 } }] },
      /must be a number/,
    ],
  ] as const) {
    const r = await json('POST', '/catalogue/models/an-model', body);
    t.equal(r.status, 400, `refused: ${JSON.stringify(body)}`);
    t.match(r.json.error.message, re);
  }
  t.equal((await json('POST', '/catalogue/models/no-such-model', { enabled: true })).status, 404);
  t.equal((await json('GET', '/catalogue')).json.version, version, 'no version was saved');

  // Export, then import: the same catalogue, a new version.
  const exported = await admin('GET', '/catalogue/export');
  const doc = JSON.parse(exported.text);
  t.equal(
    doc.models.find((m: { id: string }) => m.id === 'oa-model').enabled,
    false,
    'the export keeps switched-off entries',
  );
  t.same(
    doc.models.find((m: { id: string }) => m.id === 'fallback-model').routes[0].upstream_pricing,
    { input: 1.5, output: 3 },
    'and the upstream costs',
  );
  doc.models.find((m: { id: string }) => m.id === 'oa-model').enabled = true;
  const imported = await json('POST', '/catalogue', doc);
  t.equal(imported.status, 200, JSON.stringify(imported.json));
  t.ok(Number(imported.json.version) > Number(version));
  const relistedAfter = await heldAfter(Date.now(), () => everyWorker((ms) => ms.some((m) => m.id === 'oa-model')));
  t.ok(relistedAfter < 2000, `both workers list it again within ${relistedAfter} ms`);
  t.equal(
    (await json('POST', '/catalogue', { providers: [], models: [{ id: 'x' }] })).status,
    400,
    'a broken file is refused',
  );

  const audit = await json('GET', '/audit?limit=10');
  t.same(
    audit.json.data
      .filter((e: { action: string }) => e.action.startsWith('catalogue.'))
      .map((e: { action: string; target: string | null }) => [e.action, e.target]),
    [
      ['catalogue.import', null],
      ['catalogue.model', 'fallback-model'],
      ['catalogue.model', 'oa-model'],
    ],
    'every save is audited',
  );
  const offEntry = audit.json.data.find((e: { target: string }) => e.target === 'oa-model');
  t.equal(offEntry.before.model.enabled, undefined);
  t.equal(offEntry.after.model.enabled, false, 'with the model before and after');

  // A restart keeps the saved catalogue, not the file.
  await gw.stop('SIGTERM');
  gw = await startServe(t, env, 60_000);
  t.ok(
    await everyWorker((ms) => ms.find((m) => m.id === 'fallback-model')?.pricing.input === 3),
    'after a restart the saved catalogue is in force',
  );
  await gw.stop('SIGTERM');
});
