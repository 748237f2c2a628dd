// Typed errors on the messages surface, as the Anthropic client raises them, and the raw
// Anthropic envelope behind each; mid-stream failures; request validation.
import t from 'tap';
import type { Test } from 'tap';
import Anthropic from '@anthropic-ai/sdk';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway } from '../helpers/gateway.js';
import { postJson } from '../helpers/http.js';
import { readSSE } from '../helpers/messages.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, { upstream: fake.url });
const user = await gw.user('10');
const poor = await gw.user('0.000001');
const anthropic = (opts: ConstructorParameters<typeof Anthropic>[0] = {}) =>
  new Anthropic({ baseURL: gw.url, apiKey: user.key, maxRetries: 0, ...opts });
const client = anthropic();
const msg = (content: string): Anthropic.MessageParam[] => [{ role: 'user', content }];
const MODELS = ['an-model', 'oa-model'] as const;

/** The raw answer to the same request, to see the envelope byte-level. */
const raw = (body: unknown, headers: Record<string, string> = { 'x-api-key': user.key }) =>
  postJson(`${gw.url}/v1/messages`, body, { 'anthropic-version': '2023-06-01', ...headers });

/** Anthropic's envelope: exactly type, error{type,message}, request_id, matching the header. */
function envelope(
  t: Test,
  r: { status: number; json: any; headers: Record<string, unknown> },
  status: number,
  type: string,
) {
  t.equal(r.status, status, `status ${status}`);
  t.same(Object.keys(r.json ?? {}).sort(), ['error', 'request_id', 'type'], 'exactly the Anthropic envelope keys');
  t.equal(r.json?.type, 'error');
  t.same(Object.keys(r.json?.error ?? {}).sort(), ['message', 'type']);
  t.equal(r.json?.error?.type, type);
  t.ok(typeof r.json?.error?.message === 'string' && r.json.error.message.length > 0, 'a message');
  t.equal(r.json?.request_id, r.headers['request-id'], 'request_id matches the request-id header');
  t.match(r.json?.request_id, /\S/);
}

t.test('bad key → AuthenticationError, with x-api-key and with Bearer', async (t) => {
  fake.reset();
  const bad = 'ar-' + 'x'.repeat(40);
  const viaBearer = await anthropic({ apiKey: bad })
    .messages.create({ model: 'an-model', max_tokens: 10, messages: msg('hi') })
    .catch((e) => e);
  t.ok(viaBearer instanceof Anthropic.AuthenticationError, 'Bearer (apiKey)');
  t.equal(viaBearer.status, 401);
  t.equal(viaBearer.type, 'authentication_error');
  const viaToken = await anthropic({ apiKey: null, authToken: bad })
    .messages.create({ model: 'oa-model', max_tokens: 10, messages: msg('hi') })
    .catch((e) => e);
  t.ok(viaToken instanceof Anthropic.AuthenticationError, 'Bearer (authToken)');
  const viaHeader = await anthropic({ apiKey: null, defaultHeaders: { 'x-api-key': bad } })
    .messages.create({ model: 'an-model', max_tokens: 10, messages: msg('hi') })
    .catch((e) => e);
  t.ok(viaHeader instanceof Anthropic.AuthenticationError, 'x-api-key');
  t.equal(viaHeader.error?.error?.type, 'authentication_error');

  envelope(
    t,
    await raw({ model: 'an-model', max_tokens: 10, messages: msg('hi') }, { 'x-api-key': bad }),
    401,
    'authentication_error',
  );
  envelope(
    t,
    await raw({ model: 'an-model', max_tokens: 10, messages: msg('hi') }, { authorization: `Bearer ${bad}` }),
    401,
    'authentication_error',
  );
  envelope(t, await raw({ model: 'an-model', max_tokens: 10, messages: msg('hi') }, {}), 401, 'authentication_error');
  t.equal(fake.requests.length, 0, 'nothing reached the upstream');
});

t.test('unknown model → NotFoundError (not_found_error)', async (t) => {
  const err = await client.messages
    .create({ model: 'no-such-model', max_tokens: 10, messages: msg('hi') })
    .catch((e) => e);
  t.ok(err instanceof Anthropic.NotFoundError);
  t.equal(err.status, 404);
  t.equal(err.type, 'not_found_error');
  t.equal(err.requestID, err.headers.get('request-id'), 'the SDK reads the request id');
  envelope(t, await raw({ model: 'no-such-model', max_tokens: 10, messages: msg('hi') }), 404, 'not_found_error');
});

t.test('unfunded user → 402 billing_error, nothing forwarded, nothing reserved', async (t) => {
  fake.reset();
  for (const model of MODELS) {
    const err = await anthropic({ apiKey: poor.key })
      .messages.create({ model, max_tokens: 100, messages: msg('hi') })
      .catch((e) => e);
    t.ok(err instanceof Anthropic.APIError);
    t.ok(err instanceof Anthropic.PaymentRequiredError, 'this SDK names 402 PaymentRequiredError');
    t.equal(err.status, 402);
    t.equal(err.type, 'billing_error');
    envelope(
      t,
      await raw({ model, max_tokens: 100, messages: msg('hi') }, { 'x-api-key': poor.key }),
      402,
      'billing_error',
    );
  }
  t.equal(fake.requests.length, 0);
  t.equal((await gw.services.ledger.balance(poor.userId)).reserved, 0n);
});

for (const model of MODELS) {
  t.test(`${model}: upstream 429 → RateLimitError with retry-after`, async (t) => {
    const err = await client.messages
      .create({ model, max_tokens: 10, messages: msg('slow down [[error:429]]') })
      .catch((e) => e);
    t.ok(err instanceof Anthropic.RateLimitError);
    t.equal(err.status, 429);
    t.equal(err.type, 'rate_limit_error');
    t.match(err.headers.get('retry-after'), /^\d+$/);
    const r = await raw({ model, max_tokens: 10, messages: msg('[[error:429]]') });
    envelope(t, r, 429, 'rate_limit_error');
    t.ok(r.headers['retry-after'], 'retry-after on the raw answer');
  });

  // An OpenAI upstream says 503 where Anthropic says 529: both are "overloaded".
  const overload = model === 'an-model' ? 529 : 503;
  t.test(
    `${model}: upstream ${overload} → 529 overloaded_error (OverloadedError, an InternalServerError)`,
    async (t) => {
      const err = await client.messages
        .create({ model, max_tokens: 10, messages: msg(`[[error:${overload}]]`) })
        .catch((e) => e);
      t.equal(err.status, 529);
      t.equal(err.type, 'overloaded_error');
      t.ok(err instanceof Anthropic.InternalServerError, 'a 5xx class, so the SDK would retry it');
      t.equal(err.constructor.name, 'OverloadedError');
      envelope(
        t,
        await raw({ model, max_tokens: 10, messages: msg(`[[error:${overload}]]`) }),
        529,
        'overloaded_error',
      );
    },
  );

  t.test(
    `${model}: upstream 500 → 502 api_error; upstream 401 → 503 (the model unavailable), never leaking its key`,
    async (t) => {
      const err = await client.messages
        .create({ model, max_tokens: 10, messages: msg('[[error:500]]') })
        .catch((e) => e);
      t.ok(err instanceof Anthropic.InternalServerError);
      t.equal(err.status, 502);
      t.equal(err.type, 'api_error');
      envelope(t, await raw({ model, max_tokens: 10, messages: msg('[[error:500]]') }), 502, 'api_error');
      const cred = await raw({ model, max_tokens: 10, messages: msg('[[error:401]]') });
      envelope(t, cred, 503, 'api_error');
      t.notMatch(cred.text, process.env.FAKE_ANTHROPIC_KEY!);
      t.notMatch(cred.text, process.env.FAKE_OPENAI_KEY!);
      t.notMatch(cred.text, /127\.0\.0\.1|localhost/);
    },
  );

  t.test(`${model}: an upstream 400 is the client's: BadRequestError invalid_request_error`, async (t) => {
    const err = await client.messages.create({ model, max_tokens: 10, messages: msg('[[error:400]]') }).catch((e) => e);
    t.ok(err instanceof Anthropic.BadRequestError);
    t.equal(err.type, 'invalid_request_error');
    envelope(t, await raw({ model, max_tokens: 10, messages: msg('[[error:400]]') }), 400, 'invalid_request_error');
  });

  t.test(`${model}: a mid-stream failure is an error event; the SDK stream rejects`, async (t) => {
    const stream = client.messages.stream({ model, max_tokens: 100, messages: msg('[[midstream_error]]') });
    const texts: string[] = [];
    stream.on('text', (d) => texts.push(d));
    const err = await stream.finalMessage().catch((e) => e);
    t.ok(err instanceof Anthropic.APIError, 'rejects with an APIError');
    t.equal(err.error?.type, 'error');
    t.match(err.error?.error?.type, model === 'an-model' ? 'overloaded_error' : 'api_error');
    t.same(texts, ['Hello', ' from', ' the'], 'what came before the failure was delivered');

    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': user.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model, max_tokens: 100, stream: true, messages: msg('[[midstream_error]]') }),
    });
    t.equal(res.status, 200, 'the stream had started');
    const events = readSSE(await res.text());
    const last = events.at(-1)!;
    t.equal(last.event, 'error', 'the last event is event: error');
    t.equal(last.data.type, 'error');
    t.ok(typeof last.data.error?.type === 'string' && typeof last.data.error?.message === 'string');
    t.notOk(
      events.some((e) => e.event === 'message_stop' || e.event === 'message_delta'),
      'no message_delta/message_stop after a failure',
    );
    t.equal(events[0].event, 'message_start');
    if (model === 'oa-model') {
      // Translated, the error is the gateway's own: the full envelope, request_id included.
      t.same(Object.keys(last.data).sort(), ['error', 'request_id', 'type']);
      t.equal(last.data.request_id, res.headers.get('x-request-id'));
      t.equal(
        res.headers.get('request-id'),
        res.headers.get('x-request-id'),
        'request-id, as Anthropic names it, on streams too',
      );
      t.equal(last.data.error.type, 'api_error', 'OpenAI server_error → api_error');
    } else {
      t.same(
        last.data,
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        "same dialect: the upstream's event as sent",
      );
    }
  });
}

t.test('max_tokens is required on /v1/messages', async (t) => {
  fake.reset();
  for (const model of MODELS) {
    const err = await client.messages.create({ model, messages: msg('hi') } as any).catch((e) => e);
    t.ok(err instanceof Anthropic.BadRequestError);
    t.equal(err.type, 'invalid_request_error');
    t.match(err.message, /max_tokens/);
    envelope(t, await raw({ model, messages: msg('hi') }), 400, 'invalid_request_error');
  }
  t.equal(fake.requests.length, 0, 'refused before the upstream');
});

t.test('validation and malformed JSON → invalid_request_error', async (t) => {
  const bad = await raw('{"model": "an-model", "max_tokens": ');
  envelope(t, bad, 400, 'invalid_request_error');
  for (const body of [
    { model: 'an-model', max_tokens: 10, messages: [] },
    { model: 'an-model', max_tokens: 0, messages: msg('hi') },
    { model: 'an-model', max_tokens: 10, messages: [{ role: 7, content: 'x' }] },
    { model: 'oa-model', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text' }] }] },
  ]) {
    envelope(t, await raw(body), 400, 'invalid_request_error');
  }
});
