// What /v1/embeddings refuses, in OpenAI's envelope, and how each kind of model stays on its own
// surfaces; the catalogue's rules for embedding models; embedding models in /v1/models and the
// dashboard's catalogue.

import t, { type Test } from 'tap';
import OpenAI from 'openai';
import { compileCatalogue } from '../../src/catalogue/index.js';
import { openSession } from '../../src/dashboard/sessions.js';
import { answerErrors } from '../helpers/openapi.js';
import { embeddingsCatalogue, embed, EMBED_PRICES, startEmbeddings } from './setup.js';

const { fake, gw } = await startEmbeddings(t);
const user = await gw.user('5');
const upstreamCalls = () => fake.requests.length;

/** The OpenAI envelope, exactly its four fields. */
function envelope(
  t: Test,
  res: { status: number; json: any },
  status: number,
  fields: { type?: string; code?: string | null; param?: string | null; message?: RegExp },
) {
  t.equal(res.status, status, `status ${status}`);
  t.same(Object.keys(res.json), ['error'], 'one error object');
  t.same(Object.keys(res.json.error).sort(), ['code', 'message', 'param', 'type']);
  if (fields.type !== undefined) t.equal(res.json.error.type, fields.type);
  if (fields.code !== undefined) t.equal(res.json.error.code, fields.code);
  if (fields.param !== undefined) t.equal(res.json.error.param, fields.param);
  if (fields.message) t.match(res.json.error.message, fields.message);
}

t.test('keys: missing, unknown', async (t) => {
  envelope(t, await embed(gw, undefined, { model: 'emb-model', input: 'x' }), 401, {
    type: 'authentication_error',
    code: 'invalid_api_key',
    message: /Missing API key/,
  });
  envelope(t, await embed(gw, 'ar-not-a-real-key-000000000000000000000', { model: 'emb-model', input: 'x' }), 401, {
    type: 'authentication_error',
    code: 'invalid_api_key',
  });
});

t.test('models: unknown, a chat model here, an embedding model on the chat surfaces', async (t) => {
  const calls = upstreamCalls();
  envelope(t, await embed(gw, user.key, { model: 'no-such-model', input: 'x' }), 404, {
    type: 'invalid_request_error',
    code: 'model_not_found',
    param: 'model',
  });
  envelope(t, await embed(gw, user.key, { model: 'oa-model', input: 'x' }), 400, {
    type: 'invalid_request_error',
    code: 'model_not_supported',
    param: 'model',
    message: /"oa-model" is a chat model.*\/v1\/embeddings/,
  });
  const chat = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'emb-model', messages: [{ role: 'user', content: 'hi' }] }),
  });
  envelope(t, { status: chat.status, json: await chat.json() }, 400, {
    code: 'model_not_supported',
    param: 'model',
    message: /"emb-model" is an embedding model: call POST \/v1\/embeddings/,
  });
  const messages = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': user.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'emb-model', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = (await messages.json()) as any;
  t.equal(messages.status, 400);
  t.equal(body.type, 'error');
  t.match(body.error, { type: 'invalid_request_error', message: /embedding model: call POST \/v1\/embeddings/ });
  t.equal(upstreamCalls(), calls, 'nothing reached an upstream');
  // Through the SDK: the error class and its fields.
  const client = new OpenAI({ apiKey: user.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const err = await client.embeddings.create({ model: 'oa-model', input: 'x' }).catch((e: unknown) => e);
  t.type(err, OpenAI.BadRequestError);
  t.equal((err as InstanceType<typeof OpenAI.BadRequestError>).code, 'model_not_supported');
});

t.test('invalid inputs: each a 400 naming the field, nothing forwarded', async (t) => {
  const calls = upstreamCalls();
  const cases: [string, unknown, string, RegExp][] = [
    ['no input', { model: 'emb-model' }, 'input', /'input' is required/],
    ['an empty string', { model: 'emb-model', input: '' }, 'input', /empty string/],
    ['an empty array', { model: 'emb-model', input: [] }, 'input', /empty array/],
    [
      'an empty string among strings',
      { model: 'emb-model', input: ['a', ''] },
      'input[1]',
      /'input\[1\]' is an empty string/,
    ],
    [
      'too many inputs',
      { model: 'emb-model', input: Array.from({ length: 2049 }, () => 'a') },
      'input',
      /2049 items; at most 2048/,
    ],
    ['a negative token', { model: 'emb-model', input: [1, -2] }, 'input[1]', /not a token id/],
    ['a fractional token', { model: 'emb-model', input: [[1, 2.5]] }, 'input[0][1]', /not a token id/],
    ['an empty token array', { model: 'emb-model', input: [[1], []] }, 'input[1]', /empty token array/],
    [
      'strings and tokens mixed',
      { model: 'emb-model', input: ['a', [1]] },
      'input[1]',
      /strings only, or token arrays only/,
    ],
    ['an object', { model: 'emb-model', input: { text: 'a' } }, 'input', /must be a string, an array of strings/],
    ['dimensions 0', { model: 'emb-model', input: 'a', dimensions: 0 }, 'dimensions', /at least 1/],
    ["dimensions past the model's", { model: 'emb-model', input: 'a', dimensions: 65 }, 'dimensions', /at most 64/],
    [
      'an unknown encoding',
      { model: 'emb-model', input: 'a', encoding_format: 'int8' },
      'encoding_format',
      /"float" or "base64"/,
    ],
    ['a model that is not a string', { model: 7, input: 'a' }, 'model', /must be a string/],
    ['no model', { input: 'a' }, 'model', /'model' is required/],
    ['token ids for a text-only (Gemini) model', { model: 'emb-gemini', input: [1, 2, 3] }, 'input', /embed text only/],
    [
      'more than Gemini takes in one batch',
      { model: 'emb-gemini', input: Array.from({ length: 101 }, (_, i) => `t${i}`) },
      'input',
      /at most 100 inputs/,
    ],
  ];
  for (const [what, body, param, message] of cases) {
    t.test(what, async (t) =>
      envelope(t, await embed(gw, user.key, body), 400, { type: 'invalid_request_error', param, message }),
    );
  }
  t.test('not JSON', async (t) => envelope(t, await embed(gw, user.key, '{"model":'), 400, { code: 'invalid_json' }));
  t.test('not an object', async (t) =>
    envelope(t, await embed(gw, user.key, '[1]'), 400, { message: /must be a JSON object/ }),
  );
  await t.test('…and none went upstream', async (t) => t.equal(upstreamCalls(), calls));
});

t.test('upstream failures, in the envelope: a model the upstream does not know, a 400 it gives', async (t) => {
  const missing = await embed(gw, user.key, { model: 'emb-gemini-missing', input: 'x' });
  envelope(t, missing, 502, { type: 'upstream_error', message: /does not know this model/ });
  t.notOk(JSON.stringify(missing.json).includes(process.env.FAKE_GEMINI_KEY!), 'no upstream key in it');
  envelope(t, await embed(gw, user.key, { model: 'emb-upstream-400', input: 'x' }), 400, {
    type: 'invalid_request_error',
    message: /maximum context length/,
  });
});

t.test('/v1/models lists embedding models with their kind, dimensions and input price', async (t) => {
  const res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${user.key}` } });
  const { data } = (await res.json()) as any;
  const emb = data.find((m: any) => m.id === 'emb-model');
  t.match(emb, {
    object: 'model',
    kind: 'embedding',
    dimensions: 64,
    max_output_tokens: 0,
    pricing: { input: 0.1, output: 0 },
    official_pricing: { input: 0.13, output: 0 },
  });
  t.match(
    data.find((m: any) => m.id === 'oa-model'),
    { kind: 'chat', max_output_tokens: 1000 },
  );
  t.notOk('dimensions' in data.find((m: any) => m.id === 'oa-model'), 'a chat model has no dimensions');
  const client = new OpenAI({ apiKey: user.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const one = await client.models.retrieve('emb-gemini');
  t.match(one, { id: 'emb-gemini', kind: 'embedding', dimensions: 3072 });
});

t.test(
  'the dashboard: the catalogue with kinds, usage records of the embeddings surface, both as its OpenAPI document says',
  async (t) => {
    const session = await openSession(gw.stores.sql, user.userId, 600);
    const auth = { authorization: `Bearer ${session.token}` };
    const doc = await (await fetch(`${gw.url}/api/dashboard/openapi.json`)).json();
    for (const [path, headers] of [
      ['/api/dashboard/catalog', auth],
      ['/api/public/models', {}],
    ] as const) {
      const res = await fetch(`${gw.url}${path}`, { headers });
      t.equal(res.status, 200, path);
      const json = (await res.json()) as any;
      t.match(
        json.data.find((m: any) => m.id === 'emb-model'),
        {
          kind: 'embedding',
          dimensions: 64,
          max_output_tokens: 0,
          pricing: { input: 0.1, output: 0 },
          discount_pct: 23,
        },
      );
      t.match(
        json.data.find((m: any) => m.id === 'oa-model'),
        { kind: 'chat', dimensions: null },
      );
      if (path === '/api/dashboard/catalog')
        t.same(answerErrors(doc, '/catalog', 'get', { status: 200, json }), [], 'fits its schema');
    }
    t.equal(
      (
        await embed(
          gw,
          user.key,
          { model: 'emb-model', input: 'for the usage page' },
          { 'x-request-id': 'embed-usage-row' },
        )
      ).status,
      200,
    );
    await gw.services.outbox.drained();
    const usage = await fetch(`${gw.url}/api/dashboard/usage?limit=500`, { headers: auth });
    const json = (await usage.json()) as any;
    t.match(
      json.data.find((r: any) => r.request_id === 'embed-usage-row'),
      { surface: 'embeddings', model: 'emb-model', stream: false, completion_tokens: 0 },
    );
    t.same(
      answerErrors(doc, '/usage', 'get', { status: usage.status, json }),
      [],
      "the embeddings surface is in the schema's enum",
    );
  },
);

t.test("the catalogue's rules for embedding models", async (t) => {
  const base = embeddingsCatalogue('http://127.0.0.1:1');
  const withModel = (m: Record<string, unknown>) => ({ ...base, models: [m] });
  const emb = { id: 'e', kind: 'embedding', ...EMBED_PRICES, routes: [{ provider: 'fake-openai', model: 'x' }] };
  const compiled = compileCatalogue(withModel(emb), 'test').models.get('e')!;
  t.equal(compiled.kind, 'embedding');
  t.equal(compiled.pricingJson.output, 0, 'no output price: 0');
  t.equal(
    compileCatalogue(
      withModel({ ...emb, kind: undefined, pricing: { input: 1, output: 2 }, official_pricing: undefined }),
      'test',
    ).models.get('e')!.kind,
    'chat',
    'chat by default',
  );
  t.doesNotThrow(
    () => compileCatalogue(withModel({ ...emb, pricing: { input: 0.1, output: 0 } }), 'test'),
    'an output price of 0 is allowed',
  );
  const refused: [string, Record<string, unknown>, RegExp][] = [
    [
      'an output price on an embedding model',
      { ...emb, pricing: { input: 0.1, output: 1 } },
      /models\[0\]\.pricing\.output must be left out \(or 0\) for an embedding model/,
    ],
    [
      'an official output price on an embedding model',
      { ...emb, official_pricing: { input: 0.1, output: 1 } },
      /models\[0\]\.official_pricing\.output must be left out/,
    ],
    [
      'a chat model without an output price',
      { ...emb, kind: 'chat' },
      /models\[0\]\.pricing\.output is required for a chat model/,
    ],
    [
      'dimensions on a chat model',
      { ...emb, kind: 'chat', pricing: { input: 1, output: 1 }, official_pricing: undefined, dimensions: 8 },
      /models\[0\]\.dimensions is for embedding models only/,
    ],
    ['an unknown kind', { ...emb, kind: 'rerank' }, /models\[0\]\.kind must be "chat" or "embedding"/],
    [
      'an embedding model routed to an Anthropic provider',
      { ...emb, routes: [{ provider: 'fake-anthropic', model: 'x' }] },
      /routes\[0\]\.provider "fake-anthropic" speaks "anthropic", which has no embeddings endpoint/,
    ],
  ];
  for (const [what, model, message] of refused)
    t.throws(() => compileCatalogue(withModel(model), 'test'), { message }, what);
});
