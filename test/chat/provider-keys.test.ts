// A provider key missing from the environment, or refused by the vendor, is the operator's to
// fix: the client gets a plain "this model is unavailable" (503, code model_unavailable, not to
// be retried), the operator an error-level log line naming the provider (once a minute), and the
// route's health counts the failure; a model with another working route is served by it.

import t from 'tap';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import Anthropic from '@anthropic-ai/sdk';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { PRICES, startTestGateway, testCatalogue } from '../helpers/gateway.js';

const UNSET = 'AIROUTER_TEST_NEVER_SET_KEY';
delete process.env[UNSET];
const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const model = (id: string, routes: { provider: string; model: string }[]) => ({
  id,
  owned_by: 'fake',
  context_window: 100000,
  max_output_tokens: 1000,
  ...PRICES,
  routes,
});
const catalogue = testCatalogue({
  upstream: fake.url,
  extra: {
    providers: [{ id: 'keyless', dialect: 'openai', base_url: `${fake.url}/v1`, api_key: { env: UNSET } }],
    models: [
      model('keyless-model', [{ provider: 'keyless', model: 'upstream-oa' }]),
      model('refused-model', [{ provider: 'fake-openai', model: 'error:401' }]),
      model('mixed-model', [
        { provider: 'keyless', model: 'upstream-oa' },
        { provider: 'fake-openai', model: 'upstream-oa' },
      ]),
    ],
  },
});
const logged: { level: number; msg: string; provider?: string }[] = [];
const log = pino(
  { level: 'info' },
  new Writable({ write: (chunk, _enc, done) => (logged.push(JSON.parse(String(chunk))), done()) }),
);
const gw = await startTestGateway(t, { upstream: fake.url, catalogue, log });
const user = await gw.user('5');

const chat = (modelId: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: modelId, messages: [{ role: 'user', content: 'hi' }] }),
  });
const errorsLogged = (provider: string) => logged.filter((l) => l.level === 50 && l.provider === provider);

t.test('a key missing from the environment', async (t) => {
  const res = await chat('keyless-model');
  t.equal(res.status, 503);
  t.equal(res.headers.get('x-should-retry'), 'false', 'not to be retried: the SDKs give up at once');
  const body = (await res.json()) as { error: { message: string } };
  t.match(body, {
    error: { type: 'service_unavailable', code: 'model_unavailable', message: /"keyless-model" is unavailable/ },
  });
  t.notMatch(
    body.error.message,
    new RegExp(`${UNSET}|keyless"`),
    "the client is not told the operator's configuration",
  );
  t.equal(errorsLogged('keyless').length, 1, 'the operator is, at error level');
  t.match(
    errorsLogged('keyless')[0]!.msg,
    new RegExp(`provider "keyless" has no API key: add one in the console, or set ${UNSET}`),
  );
  t.equal((await chat('keyless-model')).status, 503);
  t.equal(errorsLogged('keyless').length, 1, 'once a minute, not once a request');

  const anthropic = new Anthropic({ baseURL: gw.url, apiKey: user.key, maxRetries: 0 });
  const err = await anthropic.messages
    .create({ model: 'keyless-model', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })
    .catch((e: unknown) => e);
  t.type(err, Anthropic.APIError);
  t.equal(
    (err as InstanceType<typeof Anthropic.APIError>).status,
    503,
    'the same on the Messages surface, in its envelope',
  );
});

t.test('a key the vendor refuses', async (t) => {
  const res = await chat('refused-model');
  t.equal(res.status, 503);
  t.match(await res.json(), { error: { code: 'model_unavailable' } });
  t.match(
    errorsLogged('fake-openai')[0]?.msg ?? '',
    /provider "fake-openai" refused its key from FAKE_OPENAI_KEY: check it \(status 401\)/,
  );
});

t.test('another route with a working key serves the model', async (t) => {
  const res = await chat('mixed-model');
  t.equal(res.status, 200);
  await res.arrayBuffer();
});

t.test("the routes' health counts the failures", async (t) => {
  const errors = async (route: string) => {
    const [row] = await gw.stores.sql<
      { errors: number }[]
    >`SELECT coalesce(sum(errors), 0)::int AS errors FROM route_health WHERE route = ${route}`;
    return row!.errors;
  };
  const deadline = Date.now() + 15_000;
  while (
    Date.now() < deadline &&
    ((await errors('keyless/upstream-oa')) < 4 || (await errors('fake-openai/error:401')) < 1)
  )
    await new Promise((r) => setTimeout(r, 250));
  t.equal(
    await errors('keyless/upstream-oa'),
    4,
    'every request that found no key (three direct, one before the working route)',
  );
  t.equal(await errors('fake-openai/error:401'), 1);
});
