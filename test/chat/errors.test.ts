// Typed errors on the chat surface, as the openai client raises them.
import t from 'tap';
import OpenAI from 'openai';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway } from '../helpers/gateway.js';
import { postJson } from '../helpers/http.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, { upstream: fake.url });
const user = await gw.user('10');
const poor = await gw.user('0.000001');
const client = (key = user.key) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
const msg = (content: string) => [{ role: 'user' as const, content }];

t.test('bad key → AuthenticationError', async (t) => {
  const err = await client('ar-' + 'x'.repeat(40))
    .chat.completions.create({ model: 'oa-model', messages: msg('hi') })
    .catch((e) => e);
  t.ok(err instanceof OpenAI.AuthenticationError);
  t.equal(err.status, 401);
  t.equal(err.code, 'invalid_api_key');
  const none = await postJson(`${gw.url}/v1/chat/completions`, { model: 'oa-model', messages: msg('hi') });
  t.equal(none.status, 401);
  t.equal(none.json.error.type, 'authentication_error');
});

t.test('unknown model → NotFoundError with model_not_found', async (t) => {
  const err = await client()
    .chat.completions.create({ model: 'no-such-model', messages: msg('hi') })
    .catch((e) => e);
  t.ok(err instanceof OpenAI.NotFoundError);
  t.equal(err.code, 'model_not_found');
  t.equal(err.param, 'model');
});

t.test('balance that cannot cover the reservation → 402 insufficient_balance, nothing forwarded', async (t) => {
  fake.reset();
  const err = await client(poor.key)
    .chat.completions.create({ model: 'oa-model', messages: msg('hi') })
    .catch((e) => e);
  t.ok(err instanceof OpenAI.APIError);
  t.equal(err.status, 402);
  t.equal(err.code, 'insufficient_balance');
  t.equal(err.type, 'insufficient_quota');
  t.equal(fake.requests.length, 0, 'the upstream never saw it');
  t.equal((await gw.services.ledger.balance(poor.userId)).reserved, 0n);
});

t.test('upstream 429 on every route → RateLimitError with retry-after', async (t) => {
  const err = await client()
    .chat.completions.create({ model: 'oa-model', messages: msg('slow down [[error:429]]') })
    .catch((e) => e);
  t.ok(err instanceof OpenAI.RateLimitError);
  t.equal(err.headers.get('retry-after'), '1');
  t.equal(err.type, 'rate_limit_error');
});

t.test('upstream 503/529 → 503 overloaded; 500 → 502 upstream_error', async (t) => {
  const over = await client()
    .chat.completions.create({ model: 'oa-model', messages: msg('[[error:503]]') })
    .catch((e) => e);
  t.equal(over.status, 503);
  t.equal(over.type, 'overloaded');
  const bad = await client()
    .chat.completions.create({ model: 'oa-model', messages: msg('[[error:500]]') })
    .catch((e) => e);
  t.ok(bad instanceof OpenAI.InternalServerError);
  t.equal(bad.status, 502);
  t.equal(bad.type, 'upstream_error');
});

t.test("upstream 400 is the client's fault: relayed as 400 with its message", async (t) => {
  const err = await client()
    .chat.completions.create({ model: 'oa-model', messages: msg('[[error:400]]') })
    .catch((e) => e);
  t.ok(err instanceof OpenAI.BadRequestError);
  t.ok(err.message.length > 0);
});

t.test('an upstream error quoting secrets and addresses reaches the client scrubbed', async (t) => {
  const leaky =
    'rejected sk-proj-AbCdEfGhIjKlMnOp_qr from db-7.prod.internal via [2001:db8::5]:443 with ' +
    'Basic dXNlcjpwYXNzd29yZA== and eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2ln and AKIAIOSFODNN7EXAMPLE';
  const r = await postJson(
    `${gw.url}/v1/chat/completions`,
    { model: 'oa-model', messages: msg(`${leaky} [[error:400:echo]]`) },
    { authorization: `Bearer ${user.key}` },
  );
  t.equal(r.status, 400);
  t.match(
    r.json.error.message,
    /^rejected \[redacted\] from \[host\] via \[address\]/,
    "the upstream's message, scrubbed",
  );
  for (const secret of ['sk-proj', 'db-7', '2001:db8', 'dXNlcjpw', 'eyJzdWIi', 'AKIAIOSF'])
    t.notOk(r.text.includes(secret), `no ${secret}`);
});

t.test('upstream credential failures never leak the provider key or address', async (t) => {
  const r = await postJson(
    `${gw.url}/v1/chat/completions`,
    { model: 'oa-model', messages: msg('[[error:401]]') },
    { authorization: `Bearer ${user.key}` },
  );
  t.equal(r.status, 503, 'the model is unavailable (test/chat/provider-keys.test.ts)');
  t.equal(r.json.error.code, 'model_unavailable');
  t.notMatch(r.text, process.env.FAKE_OPENAI_KEY!);
  t.notMatch(r.text, /127\.0\.0\.1|localhost/);
});

t.test('malformed JSON and failed validation → BadRequestError naming the field', async (t) => {
  const raw = await postJson(`${gw.url}/v1/chat/completions`, '{"model": "oa-model", "messages": [', {
    authorization: `Bearer ${user.key}`,
  });
  t.equal(raw.status, 400);
  t.equal(raw.json.error.type, 'invalid_request_error');
  const err = await client()
    .chat.completions.create({ model: 'oa-model', messages: 'nope' as any })
    .catch((e) => e);
  t.ok(err instanceof OpenAI.BadRequestError);
  t.equal(err.param, 'messages');
  const temp = await client()
    .chat.completions.create({ model: 'oa-model', messages: msg('x'), temperature: 9 })
    .catch((e) => e);
  t.equal(temp.param, 'temperature');
});

t.test('a body over MAX_BODY_BYTES → 413 request_too_large', async (t) => {
  const small = await startTestGateway(t, { upstream: fake.url, env: { MAX_BODY_BYTES: '2048' } });
  const u = await small.user('1');
  const r = await postJson(
    `${small.url}/v1/chat/completions`,
    { model: 'oa-model', messages: msg('x'.repeat(5000)) },
    { authorization: `Bearer ${u.key}` },
  );
  t.equal(r.status, 413);
  t.equal(r.json.error.code, 'request_too_large');
});
