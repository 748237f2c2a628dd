// The hold is a true upper bound: a hostile customer cannot be served more than it pays for.
// Real gateway, real Postgres and Redis, the fake upstream playing a vendor that honours only
// `max_tokens` and answers `n` choices ([[fill]]), as in the money-safety issue.

import t, { type Test } from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { reconcile } from '../../src/billing/reconcile.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, { upstream: fake.url, env: { MAX_N: '8' } });
const sql = gw.stores.sql;

async function settledBooks(t: Test) {
  await gw.services.outbox.drained();
  const report = await reconcile(sql, gw.stores.hot);
  t.same(report.mismatches, [], 'Postgres reconciles');
  t.same(report.hotMismatches, [], 'Redis agrees');
}

type Row = { cost_nano: bigint; prompt_tokens: number; completion_tokens: number; overrun: boolean; status: number };
const rowsOf = (userId: string) =>
  sql<
    Row[]
  >`SELECT cost_nano, prompt_tokens, completion_tokens, overrun, status FROM usage_records WHERE user_id = ${userId}`;

/** Test prices: $1/M input, $2/M output → 1000 and 2000 nano per token. */
const priced = (r: Row) => BigInt(r.prompt_tokens) * 1000n + BigInt(r.completion_tokens) * 2000n;

t.test('the n × max_completion_tokens / max_tokens flood against a tiny balance', async (t) => {
  const u = await gw.user('0.00085');
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: u.key, maxRetries: 0 });
  fake.reset();
  const body = {
    model: 'oa-model',
    n: 8,
    max_completion_tokens: 1,
    max_tokens: 500,
    messages: [{ role: 'user' as const, content: 'fill it [[fill]]' }],
  };
  const results = await Promise.allSettled(Array.from({ length: 200 }, () => client.chat.completions.create(body)));
  const answered = results.filter((r) => r.status === 'fulfilled');
  t.ok(answered.length > 0, `some were answered (${answered.length})`);
  for (const r of answered) {
    const c = (r as PromiseFulfilledResult<OpenAI.ChatCompletion>).value;
    t.equal(c.choices.length, 8, 'eight choices');
    t.equal(c.usage?.completion_tokens, 8, 'one token each: the cap the client named');
  }
  const sent = fake.requests.filter((r) => r.path.endsWith('/chat/completions'));
  t.ok(
    sent.every((r) => r.body.max_tokens === 1 && !('max_completion_tokens' in r.body)),
    'the upstream got exactly the reserved cap, in the field it honours',
  );
  const rows = await settledBooksAndRows(t, u.userId);
  t.equal(rows.length, answered.length, 'a record per answer');
  t.ok(
    rows.every((r) => r.cost_nano >= priced(r) && r.cost_nano > 0n),
    'each charged at least its usage priced',
  );
  t.ok(
    rows.every((r) => !r.overrun),
    'no overrun: the hold covered every answer',
  );
  const [{ balance_nano }] = await sql<
    { balance_nano: bigint }[]
  >`SELECT balance_nano FROM users WHERE id = ${u.userId}`;
  t.ok(balance_nano >= 0n, `never below zero (${balance_nano})`);
  const spent = rows.reduce((a, r) => a + r.cost_nano, 0n);
  t.ok(spent <= 850_000n, `served no more than the balance ($${spent} nano of 850000)`);
});

async function settledBooksAndRows(t: Test, userId: string) {
  await settledBooks(t);
  return rowsOf(userId);
}

t.test('n alone: each choice is held for, the upstream answers all of them', async (t) => {
  // Each request holds 8 × 1000 output tokens × $2/M = $0.016: this balance covers six.
  const u = await gw.user('0.1');
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: u.key, maxRetries: 0 });
  const results = await Promise.allSettled(
    Array.from({ length: 100 }, () =>
      client.chat.completions.create({ model: 'oa-model', n: 8, messages: [{ role: 'user', content: '[[fill]]' }] }),
    ),
  );
  const answered = results.filter((r) => r.status === 'fulfilled').length;
  const refused = results.filter(
    (r) => r.status === 'rejected' && (r.reason as { status?: number }).status === 402,
  ).length;
  t.equal(answered + refused, 100, 'answered or refused with 402, nothing else');
  const rows = await settledBooksAndRows(t, u.userId);
  t.ok(
    rows.every((r) => r.completion_tokens === 8_000 && !r.overrun),
    "each answer 8 × the model's 1000-token cap, within its hold",
  );
  const spent = rows.reduce((a, r) => a + r.cost_nano, 0n);
  t.ok(rows.length >= 6, `answers flowed (${rows.length})`);
  t.ok(spent <= 100_000_000n, `served no more than the balance (${spent} of 100000000 nano)`);
  const tooMany = await client.chat.completions
    .create({ model: 'oa-model', n: 9, messages: [{ role: 'user', content: 'hi' }] })
    .catch((e: unknown) => e);
  t.type(tooMany, OpenAI.BadRequestError, 'n above MAX_N is refused');
  t.equal((tooMany as InstanceType<typeof OpenAI.BadRequestError>).param, 'n');
});

t.test('an upstream that ignores the cap: the overrun is charged in full and marked', async (t) => {
  const u = await gw.user('0.01');
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: u.key, maxRetries: 0 });
  // [[long:500]] writes 500 pieces whatever cap it is sent: an upstream that does not honour it.
  await client.chat.completions.create({
    model: 'oa-model',
    max_tokens: 1,
    messages: [{ role: 'user', content: 'go on [[long:500]]' }],
  });
  const rows = await settledBooksAndRows(t, u.userId);
  t.equal(rows.length, 1);
  t.equal(rows[0].completion_tokens, 500, 'the upstream wrote 500 tokens for a cap of 1');
  t.ok(rows[0].overrun, 'the record says so');
  t.equal(rows[0].cost_nano, priced(rows[0]), 'charged in full, nothing written off');
  const metrics = await gw.metrics();
  t.match(metrics, /airouter_billing_overruns_total [1-9]/, 'counted');
});

const ONE_MB = 'z'.repeat(1_000_000);

t.test('every forwarded part raises the hold: 1 MB anywhere is held for', async (t) => {
  // $0.05 covers any small request here (output cap 1000 × $2/M = $0.002) but not 1 MB of
  // input (about 333,000 tokens × $1/M = $0.33).
  const u = await gw.user('0.05');
  const post = (path: string, body: object, key = u.key) =>
    fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const chat = (extra: object, content: unknown = 'hi') =>
    post('/v1/chat/completions', { model: 'oa-model', messages: [{ role: 'user', content }], ...extra });
  const messages = (content: unknown, extra: object = {}) =>
    post('/v1/messages', { model: 'an-model', max_tokens: 100, messages: [{ role: 'user', content }], ...extra });
  const variants: [string, () => Promise<Response>, () => Promise<Response>][] = [
    ['message text', () => chat({}, ONE_MB), () => chat({}, 'small')],
    [
      'functions',
      () => chat({ functions: [{ name: 'f', description: ONE_MB, parameters: { type: 'object' } }] }),
      () => chat({ functions: [{ name: 'f', description: 'd', parameters: { type: 'object' } }] }),
    ],
    [
      'response_format',
      () =>
        chat({ response_format: { type: 'json_schema', json_schema: { name: 's', schema: { description: ONE_MB } } } }),
      () => chat({ response_format: { type: 'json_object' } }),
    ],
    [
      'a file part',
      () =>
        chat({}, [
          { type: 'text', text: 'read' },
          { type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${ONE_MB}` } },
        ]),
      () => chat({}, [{ type: 'text', text: 'read' }]),
    ],
    [
      'prediction',
      () => chat({ prediction: { type: 'content', content: ONE_MB } }),
      () => chat({ prediction: { type: 'content', content: 'p' } }),
    ],
    [
      'a document block',
      () =>
        messages([
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: ONE_MB } },
          { type: 'text', text: 'read' },
        ]),
      () => messages('small'),
    ],
    [
      'a search_result block',
      () =>
        messages([
          { type: 'search_result', source: 'https://x.test', title: 't', content: [{ type: 'text', text: ONE_MB }] },
          { type: 'text', text: 'read' },
        ]),
      () => messages('small'),
    ],
    ['an unknown field', () => chat({ metadata_of_mine: ONE_MB }), () => chat({ metadata_of_mine: 'm' })],
  ];
  for (const [name, big, small] of variants) {
    const ok = await small();
    t.equal(ok.status, 200, `${name}: a small one is answered`);
    await ok.arrayBuffer();
    const refused = await big();
    t.equal(refused.status, 402, `${name}: 1 MB of it is held for, and the balance cannot cover it`);
    await refused.arrayBuffer();
  }
  await settledBooks(t);
});

t.test('the output cap sent upstream is the one reserved for, on both surfaces', async (t) => {
  const u = await gw.user('1');
  fake.reset();
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: u.key, maxRetries: 0 });
  await client.chat.completions.create({
    model: 'oa-model',
    max_completion_tokens: 7,
    messages: [{ role: 'user', content: 'hi' }],
  });
  await client.chat.completions.create({ model: 'oa-model', messages: [{ role: 'user', content: 'hi' }] });
  await client.chat.completions.create({
    model: 'an-model',
    max_tokens: 5000,
    messages: [{ role: 'user', content: 'hi' }],
  });
  const anthropic = new Anthropic({ baseURL: gw.url, apiKey: u.key, maxRetries: 0 });
  await anthropic.messages.create({
    model: 'an-model',
    max_tokens: 5_000,
    messages: [{ role: 'user', content: 'hi' }],
  });
  const caps = fake.requests.map((r) => [r.body.max_tokens, r.body.max_completion_tokens]);
  t.same(
    caps,
    [
      [7, undefined],
      [1000, undefined],
      [1000, undefined],
      [1000, undefined],
    ],
    "the smaller of the client's cap and the model's maximum, always sent",
  );
  await settledBooks(t);
});

t.test('holds of a key without limits come from a lease: many requests, few store calls, in /metrics', async (t) => {
  const u = await gw.user('10');
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: u.key, maxRetries: 0 });
  const count = (text: string, re: RegExp) => Number(re.exec(text)?.[1] ?? 0);
  const draws = /airouter_lease_draws_total (\d+)/;
  const opened = /airouter_lease_store_calls_total\{mode="open"\} (\d+)/;
  const before = await gw.metrics();
  for (let i = 0; i < 20; i++)
    await client.chat.completions.create({
      model: 'oa-model',
      max_tokens: 5,
      messages: [{ role: 'user', content: 'hi' }],
    });
  const after = await gw.metrics();
  t.equal(
    count(after, draws) - count(before, draws),
    19,
    "every request but the user's first (a hold of its own: a lease pays from the second) drew its hold from a lease",
  );
  t.equal(count(after, opened) - count(before, opened), 1, 'one store call opened it');
  await settledBooks(t);
});
