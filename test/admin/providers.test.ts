// Providers and their keys from the console: added, edited, tested and disabled through the admin
// API against a real gateway and the fake upstream; keys sealed in Postgres, shown by their last
// four characters, never logged, picked by weight; a missing or refused key is the operator's
// "model unavailable" and counted by cause on the health page; routes drawn by weight.

import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import type { Test } from 'tap';
import * as v from 'valibot';
import { setAdmin } from '../../src/admin/accounts.js';
import * as S from '../../src/admin/shapes.js';
import { startFakeUpstream, type FakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/child.js';

const SECRET = 'a provider key secret of at least thirty-two characters';
const GOOD = 'sk-console-saved-key-1111AAAA';
const OTHER = 'sk-console-saved-key-2222BBBB';

async function adminOf(gw: TestGateway) {
  const u = await gw.user('10');
  await setAdmin(gw.services.sql, { id: null, label: 'test setup' }, u.userId, true);
  const login = await fetch(`${gw.url}/api/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: u.email, password: 'correct horse battery staple' }),
  });
  const { token } = (await login.json()) as { token: string };
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; json: any; text: string }> => {
    const r = await fetch(`${gw.url}/api/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: r.status, json, text };
  };
}

function chat(gw: TestGateway, key: string, model: string) {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
  });
}

/** The keys the fake upstream saw on requests for `model`, in order. */
const keysSeen = (up: FakeUpstream, model: string) =>
  up.requests
    .filter((r) => r.body?.model === model)
    .map((r) => String(r.headers.authorization ?? r.headers['x-api-key'] ?? '').replace(/^Bearer /, ''));

function fits(t: Test, schema: v.GenericSchema, value: unknown, what: string) {
  const r = v.safeParse(schema, value);
  t.ok(
    r.success,
    `${what} fits its documented shape${r.success ? '' : `: ${r.issues[0].message} at ${(r.issues[0].path ?? []).map((p) => String(p.key)).join('.')}`}`,
  );
}

function capturedLog() {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      text += chunk.toString();
      cb();
    },
  });
  return { log: pino({ level: 'debug' }, sink), text: () => text };
}

t.test('a provider added in the console, its keys sealed, tested, weighted and disabled', async (t) => {
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const logged = capturedLog();
  const gw = await startTestGateway(t, { upstream: up.url, env: { PROVIDER_KEY_SECRET: SECRET }, log: logged.log });
  const admin = await adminOf(gw);
  const user = await gw.user('5');

  // A provider and a model routed to it, from the console: its key is to come from a variable
  // nobody set. (A provider that names no key at all is called without one: a local server.)
  const added = await admin('POST', '/providers', {
    id: 'console-oa',
    dialect: 'openai',
    base_url: `${up.url}/v1`,
    api_key_env: 'CONSOLE_OA_KEY_UNSET',
  });
  t.equal(added.status, 201, added.text);
  fits(t, S.AdminProvider, added.json, 'a new provider');
  t.equal(added.json.key_source, 'missing', 'no key: every call would fail, and the console says so');
  t.equal(
    (await admin('POST', '/providers', { id: 'console-oa', dialect: 'openai', base_url: `${up.url}/v1` })).status,
    409,
    'an id is taken once',
  );
  const badDialect = await admin('POST', '/providers', { id: 'x', dialect: 'klingon', base_url: `${up.url}/v1` });
  t.equal(badDialect.status, 400);
  t.match(
    badDialect.json.error.message,
    /dialect must be "openai", "anthropic", "responses" or "gemini"/,
    'a bad dialect is named, with the good ones',
  );

  const model = await admin('POST', '/catalogue/models', {
    id: 'console-model',
    pricing: { input: 1, output: 2 },
    routes: [{ provider: 'console-oa', model: 'upstream-console', upstream_pricing: { input: 0.5, output: 1 } }],
  });
  t.equal(model.status, 200, model.text);
  t.ok(
    model.json.in_service.some((m: { id: string }) => m.id === 'console-model'),
    'the new model serves at once',
  );
  t.equal(
    (
      await admin('POST', '/catalogue/models', {
        id: 'console-model',
        pricing: { input: 1, output: 2 },
        routes: [{ provider: 'console-oa', model: 'y' }],
      })
    ).status,
    409,
    'a model id is taken once',
  );
  const unknownProvider = await admin('POST', '/catalogue/models', {
    id: 'm2',
    pricing: { input: 1, output: 2 },
    routes: [{ provider: 'nobody', model: 'y' }],
  });
  t.equal(unknownProvider.status, 400);
  t.match(
    unknownProvider.json.error.message,
    /provider "nobody" is not a listed provider/,
    "the catalogue's own message",
  );

  // No key: the user is told the model is unavailable, not to retry; health counts why.
  const noKey = await chat(gw, user.key, 'console-model');
  t.equal(noKey.status, 503);
  t.equal(noKey.headers.get('x-should-retry'), 'false');
  const noKeyBody = (await noKey.json()) as { error: { code: string; message: string } };
  t.equal(noKeyBody.error.code, 'model_unavailable');
  t.notMatch(noKeyBody.error.message, /console-oa|key/i, "the user is not shown the operator's provider or its key");
  t.match(
    logged.text(),
    /provider \\?"console-oa\\?" has no API key: add one in the console/,
    "the operator's log names the provider",
  );

  // Keys: saved sealed, shown by their last four characters only.
  const noWeight = await admin('POST', '/providers/console-oa/keys', { key: 'short' });
  t.equal(noWeight.status, 400, 'a key too short to be one is refused');
  const k1 = await admin('POST', '/providers/console-oa/keys', { key: GOOD, label: 'main', weight: 3 });
  t.equal(k1.status, 201, k1.text);
  fits(t, S.ProviderKeyInfo, k1.json, 'a saved key');
  t.equal(k1.json.hint, '…AAAA');
  t.notMatch(k1.text, GOOD, 'the answer does not carry the key');
  const k2 = await admin('POST', '/providers/console-oa/keys', { key: OTHER, weight: 1 });
  t.equal(k2.status, 201);
  const [row] = await gw.services.sql<{ sealed: Buffer }[]>`SELECT sealed FROM provider_keys WHERE id = ${k1.json.id}`;
  t.notOk(row!.sealed.includes(Buffer.from(GOOD)), 'Postgres holds the key sealed, not in the clear');
  t.notOk(row!.sealed.includes(Buffer.from(GOOD.slice(0, 12))), 'not even its start');
  const listed = await admin('GET', '/providers');
  fits(t, S.AdminProviderList, listed.json, 'the provider list');
  t.notMatch(listed.text, GOOD.slice(0, -4), 'the list shows no key beyond its hint');
  const mine = listed.json.data.find((p: { id: string }) => p.id === 'console-oa');
  t.equal(mine.key_source, 'saved');
  t.same(
    mine.keys.map((k: { hint: string; weight: number }) => [k.hint, k.weight]),
    [
      ['…AAAA', 3],
      ['…BBBB', 1],
    ],
  );
  t.same(mine.models, ['console-model']);

  // Calls now carry the keys, shared by weight (3:1).
  up.reset();
  for (let i = 0; i < 80; i++) {
    const r = await chat(gw, user.key, 'console-model');
    t.equal(r.status, 200, 'served');
    await r.arrayBuffer();
    if (r.status !== 200) break;
  }
  const seen = keysSeen(up, 'upstream-console');
  const a = seen.filter((k) => k === GOOD).length;
  const b = seen.filter((k) => k === OTHER).length;
  t.equal(a + b, 80, 'every call carried one of the saved keys');
  t.ok(a > b && b > 0, `both keys used, the heavier more often (${a}:${b})`);

  // The test button: one real call per key.
  const tested = await admin('POST', '/providers/console-oa/test', {});
  t.equal(tested.status, 200, tested.text);
  fits(t, S.ProviderTestAnswer, tested.json, 'a test');
  t.same(
    tested.json.results.map((r: { ok: boolean; status: number }) => [r.ok, r.status]),
    [
      [true, 200],
      [true, 200],
    ],
  );
  t.equal(tested.json.model, 'upstream-console');

  // Keys switched off and deleted.
  const disabledOne = await admin('POST', `/providers/console-oa/keys/${k2.json.id}`, { enabled: false });
  t.equal(disabledOne.json.enabled, false);
  await admin('POST', `/providers/console-oa/keys/${k1.json.id}`, { enabled: false });
  t.equal((await admin('DELETE', `/providers/console-oa/keys/${k2.json.id}`)).status, 200);
  t.equal((await admin('GET', '/providers/console-oa')).json.keys.length, 1, 'deleted');
  t.equal((await admin('DELETE', `/providers/console-oa/keys/${k2.json.id}`)).status, 404, 'once');
  const off = await admin('GET', '/providers/console-oa');
  t.equal(off.json.key_source, 'missing', 'its only key switched off: no key again');
  await admin('POST', `/providers/console-oa/keys/${k1.json.id}`, { enabled: true });

  // Disabled provider: its routes leave service, and its model with them.
  const disabled = await admin('POST', '/providers/console-oa', { enabled: false });
  t.equal(disabled.status, 200, disabled.text);
  const gone = await chat(gw, user.key, 'console-model');
  t.equal(gone.status, 404, 'a model with no provider in service is not served');
  await gone.arrayBuffer();
  await admin('POST', '/providers/console-oa', { enabled: true });
  const back = await chat(gw, user.key, 'console-model');
  t.equal(back.status, 200, 'and back');
  await back.arrayBuffer();

  // Health: failures by cause.
  await waitFor(
    async () => {
      const h = await admin('GET', '/health');
      const r = h.json.routes.find((x: { route: string }) => x.route === 'console-oa/upstream-console');
      return r?.day.causes.no_key >= 1;
    },
    8000,
    200,
  );
  const health = await admin('GET', '/health');
  fits(t, S.Health, health.json, 'health');
  const route = health.json.routes.find((x: { route: string }) => x.route === 'console-oa/upstream-console');
  t.ok(route.day.causes.no_key >= 1, 'the missing key counted as such');
  t.equal(
    route.day.causes.server + route.day.causes.timeout + route.day.causes.connect,
    0,
    'and not as an upstream outage',
  );

  t.notMatch(logged.text(), GOOD, 'no log line carries a saved key');
  t.notMatch(logged.text(), OTHER, 'nor the other');
  const audit = await admin('GET', '/audit?action=provider.key_add');
  t.equal(audit.json.data.length, 2, 'each saved key is audited');
  t.notMatch(JSON.stringify(audit.json), GOOD.slice(0, -4), 'by its hint only');
});

t.test(
  "a key the vendor refuses is the operator's, counted as key_refused; the test shows the vendor's answer",
  async (t) => {
    const up = await startFakeUpstream();
    t.teardown(() => up.close());
    const gw = await startTestGateway(t, { upstream: up.url, env: { PROVIDER_KEY_SECRET: SECRET } });
    const admin = await adminOf(gw);
    const user = await gw.user('5');
    await admin('POST', '/providers', {
      id: 'refusing',
      dialect: 'anthropic',
      base_url: up.url,
      api_key_env: 'REFUSED_KEY_FOR_TEST',
    });
    process.env.REFUSED_KEY_FOR_TEST = 'bad-key';
    t.teardown(() => delete process.env.REFUSED_KEY_FOR_TEST);
    await admin('POST', '/catalogue/models', {
      id: 'refused-model',
      pricing: { input: 1, output: 2 },
      routes: [{ provider: 'refusing', model: 'upstream-refused' }],
    });
    const r = await chat(gw, user.key, 'refused-model');
    t.equal(r.status, 503);
    t.equal(((await r.json()) as { error: { code: string } }).error.code, 'model_unavailable');
    const tested = await admin('POST', '/providers/refusing/test', {});
    t.equal(tested.json.results.length, 1);
    t.equal(tested.json.results[0].key, 'REFUSED_KEY_FOR_TEST', 'the key is named by where it comes from');
    t.equal(tested.json.results[0].status, 401);
    t.equal(tested.json.results[0].ok, false);
    await waitFor(
      async () => {
        const h = await admin('GET', '/health');
        return (
          h.json.routes.find((x: { route: string }) => x.route === 'refusing/upstream-refused')?.day.causes
            .key_refused >= 1
        );
      },
      8000,
      200,
    );
    t.pass('the refusal is counted as key_refused');
  },
);

t.test(
  'without PROVIDER_KEY_SECRET on a shared Postgres, keys are refused in words; keys sealed under another secret are not used',
  async (t) => {
    const up = await startFakeUpstream();
    t.teardown(() => up.close());
    const sealedGw = await startTestGateway(t, { upstream: up.url, env: { PROVIDER_KEY_SECRET: SECRET } });
    const sealer = await adminOf(sealedGw);
    t.equal((await sealer('POST', '/providers/fake-openai/keys', { key: GOOD })).status, 201);

    const plain = await startTestGateway(t, {
      upstream: up.url,
      env: {
        DATABASE_URL: sealedGw.services.config.DATABASE_URL!,
        REDIS_PREFIX: `${sealedGw.services.config.REDIS_PREFIX}other:`,
      },
    });
    const admin = await adminOf(plain);
    const refused = await admin('POST', '/providers/fake-openai/keys', { key: OTHER });
    t.equal(refused.status, 409);
    t.equal(refused.json.error.code, 'provider_key_secret_missing');
    t.match(refused.json.error.message, /set PROVIDER_KEY_SECRET/);
    const list = await admin('GET', '/providers');
    t.equal(list.json.can_save_keys, false);
    const p = list.json.data.find((x: { id: string }) => x.id === 'fake-openai');
    t.equal(p.unopened_keys, 1, 'the key it cannot open is counted');
    t.equal(p.key_source, 'missing', "and not replaced by the environment's key: the operator meant the saved one");
    const user = await plain.user('5');
    const r = await chat(plain, user.key, 'oa-model');
    t.equal(r.status, 503, 'the model is unavailable rather than served with another key');
    await r.arrayBuffer();
  },
);

t.test('the catalogue file and the saved catalogue: one rule, shown', async (t) => {
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const gw = await startTestGateway(t, { upstream: up.url });
  const admin = await adminOf(gw);
  const first = await admin('GET', '/catalogue');
  t.equal(first.json.source, 'file');
  t.equal(first.json.file.differs, false, 'nothing saved: the file is in force');
  await admin('POST', '/catalogue/models/oa-model', { pricing: { input: 9, output: 9 } });
  const saved = await admin('GET', '/catalogue');
  t.equal(saved.json.source, 'postgres');
  t.equal(
    saved.json.file.differs,
    true,
    'a saved price: the file no longer says what serves, and the console shows it',
  );
  const loaded = await admin('POST', '/catalogue/load-file', {});
  t.equal(loaded.status, 200, loaded.text);
  t.equal(loaded.json.file.differs, false, 'the file loaded is what serves');
  t.equal(loaded.json.document.models.find((m: { id: string }) => m.id === 'oa-model').pricing.input, 1, 'its price');
  fits(t, S.CatalogueState, loaded.json, 'the catalogue state');
});

t.test('routes drawn by weight: 0 is a fallback only, equal weights share', async (t) => {
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const gw = await startTestGateway(t, { upstream: up.url });
  const admin = await adminOf(gw);
  const user = await gw.user('5');
  const route = (provider: string, model: string, weight: number) => ({ provider, model, weight });
  await admin('POST', '/catalogue/models', {
    id: 'w-model',
    pricing: { input: 1, output: 2 },
    routes: [route('fake-openai', 'w-oa', 0), route('fake-anthropic', 'w-an', 1)],
  });
  up.reset();
  for (let i = 0; i < 10; i++) await (await chat(gw, user.key, 'w-model')).arrayBuffer();
  t.equal(keysSeen(up, 'w-oa').length, 0, 'weight 0: never first');
  t.equal(keysSeen(up, 'w-an').length, 10);
  await admin('POST', '/catalogue/models/w-model', {
    routes: [route('fake-openai', 'w-oa', 1), route('fake-anthropic', 'w-an', 1)],
  });
  up.reset();
  for (let i = 0; i < 40; i++) await (await chat(gw, user.key, 'w-model')).arrayBuffer();
  const oa = keysSeen(up, 'w-oa').length;
  const an = keysSeen(up, 'w-an').length;
  t.equal(oa + an, 40);
  t.ok(oa > 0 && an > 0, `equal weights share (${oa}:${an})`);
});
