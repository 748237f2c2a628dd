// Money and liveness on translated paths: a cross-dialect stream is charged exactly the
// upstream's usage at the catalogue prices (hot balance and usage record), count_tokens is
// exact or estimated but never charged, and a slow translated stream carries pings the SDK
// tolerates.
import t from 'tap';
import type { Test } from 'tap';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startFakeUpstream, countPromptTokens, TEXT_ANSWER } from '../fake-upstream/server.js';
import { startTestGateway, PRICES } from '../helpers/gateway.js';
import { eventually, postJson } from '../helpers/http.js';
import {
  anthropicStreamReference,
  assume,
  expectedCostNano,
  openaiStreamReference,
  readSSE,
  sequenceProblems,
  type Usage,
} from '../helpers/messages.js';
import { FIXTURES_DIR } from '../fixtures/index.js';

const FIXTURES = FIXTURES_DIR;
const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, { upstream: fake.url, env: { PING_INTERVAL_MS: '300' } });
const user = await gw.user('10');
const anthropic = new Anthropic({ baseURL: gw.url, apiKey: user.key, maxRetries: 0 });
const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: user.key, maxRetries: 0 });

const balance = async () => (await gw.services.ledger.balance(user.userId)).balance;
const snapshot = async () => ({ balance: await balance(), rows: await rowCount() });
interface Row {
  request_id: string;
  model: string;
  surface: string;
  stream: boolean;
  status: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  cost_nano: bigint;
  official_cost_nano: bigint;
}
async function rows(): Promise<Row[]> {
  await gw.services.outbox.drained();
  return gw.services.sql<Row[]>`
    SELECT request_id, model, surface, stream, status, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, cost_nano, official_cost_nano
    FROM usage_records WHERE user_id = ${user.userId} ORDER BY id`;
}
/**
 * The record of the request made after `count` records existed. A stream is settled and
 * recorded just after its last byte leaves, so the client can be done first: poll.
 */
async function rowAfter(t: Test, count: number): Promise<Row | undefined> {
  const all = await eventually(async () => {
    const r = await rows();
    return r.length > count ? r : undefined;
  });
  t.equal(all?.length, count + 1, 'exactly one usage record per request');
  return all?.at(-1);
}
const rowCount = async () => (await rows()).length;

/** The usage row and balance movement one request must leave behind. */
async function expectCharged(
  t: Test,
  before: { balance: bigint; rows: number },
  usage: Usage,
  want: { model: string; surface: string; stream: boolean; status?: number },
) {
  const cost = expectedCostNano(usage);
  assume(cost > 0n, 'a non-zero cost to check');
  const row = await rowAfter(t, before.rows);
  t.equal(before.balance - (await balance()), cost, `hot balance dropped by exactly ${cost} nano`);
  t.match(row, { ...want, status: want.status ?? 200 });
  t.same(
    [row?.prompt_tokens, row?.completion_tokens, row?.cached_tokens, row?.cache_write_tokens],
    [usage.input + usage.cacheRead + usage.cacheWrite, usage.output, usage.cacheRead, usage.cacheWrite],
    'usage record: prompt (cached included), completion, cache read, cache write',
  );
  t.equal(row?.cost_nano, cost, 'usage record carries the same cost');
  t.equal(
    row?.official_cost_nano,
    expectedCostNano(usage, PRICES.official_pricing),
    'official cost at the official prices',
  );
  t.equal((await gw.services.ledger.balance(user.userId)).reserved, 0n, 'nothing left reserved');
}

t.test('Anthropic client, OpenAI upstream, stream with cached tokens: charged the upstream usage', async (t) => {
  const prompt = 'A long prompt that is mostly cached [[cached]] '.repeat(20);
  const before = await snapshot();
  const stream = anthropic.messages.stream({
    model: 'oa-model',
    max_tokens: 100,
    messages: [{ role: 'user', content: prompt }],
  });
  const m = await stream.finalMessage();
  // What the fake (OpenAI dialect) reported: prompt_tokens with 80% cached, 5 completion tokens.
  const promptTokens = countPromptTokens(fake.requests.at(-1)!.body, 'openai');
  const cached = Math.floor(promptTokens * 0.8);
  const usage: Usage = { input: promptTokens - cached, cacheRead: cached, cacheWrite: 0, output: 5 };
  t.same(
    [m.usage.input_tokens, m.usage.cache_read_input_tokens, m.usage.cache_creation_input_tokens, m.usage.output_tokens],
    [usage.input, usage.cacheRead, 0, 5],
    'the client saw the same counts, input without cached',
  );
  await expectCharged(t, before, usage, { model: 'oa-model', surface: 'messages', stream: true });
});

t.test('chat client, Anthropic upstream, stream with cache reads and writes', async (t) => {
  const prompt = 'A long prompt that is mostly cached [[cached]] '.repeat(20);
  const before = await snapshot();
  const s = await openai.chat.completions.create({
    model: 'an-model',
    stream: true,
    messages: [{ role: 'user', content: prompt }],
  });
  let text = '';
  for await (const c of s) text += c.choices[0]?.delta?.content ?? '';
  t.equal(text, TEXT_ANSWER);
  const total = countPromptTokens(fake.requests.at(-1)!.body, 'anthropic');
  const cacheRead = Math.floor(total * 0.8);
  const usage: Usage = { input: total - cacheRead, cacheRead, cacheWrite: 10, output: 5 };
  await expectCharged(t, before, usage, { model: 'an-model', surface: 'chat', stream: true });
});

t.test('recorded streams translated: charged what the recording reports', async (t) => {
  // A real cache write (18639 tokens at the cache-write price) through the chat surface.
  const write = 'anthropic/stream_cache_write.sse';
  let before = await snapshot();
  const s = await openai.chat.completions.create({
    model: 'an-model',
    stream: true,
    messages: [{ role: 'user', content: `[[replay:${write}]]` }],
  });
  for await (const _ of s);
  const ref = anthropicStreamReference(readFileSync(path.join(FIXTURES, write), 'utf8'));
  assume(ref.usage.cacheWrite === 18639, 'the recording wrote 18639 tokens to the cache');
  await expectCharged(t, before, ref.usage, { model: 'an-model', surface: 'chat', stream: true });

  // A real OpenAI tool-call stream through the messages surface.
  const tools = 'openai/stream_parallel_tool_calls_include_usage.sse';
  before = await snapshot();
  await anthropic.messages
    .stream({ model: 'oa-model', max_tokens: 500, messages: [{ role: 'user', content: `[[replay:${tools}]]` }] })
    .finalMessage();
  const oref = openaiStreamReference(readFileSync(path.join(FIXTURES, tools), 'utf8'));
  assume(oref.usage.input === 149 && oref.usage.output === 60, 'the recording used 149 + 60 tokens');
  await expectCharged(t, before, oref.usage, { model: 'oa-model', surface: 'messages', stream: true });
});

t.test('non-stream translated answers are charged the same way', async (t) => {
  let before = await snapshot();
  const m = await anthropic.messages.create({
    model: 'oa-model',
    max_tokens: 100,
    messages: [{ role: 'user', content: 'hi' }],
  });
  await expectCharged(
    t,
    before,
    { input: m.usage.input_tokens, cacheRead: 0, cacheWrite: 0, output: 5 },
    { model: 'oa-model', surface: 'messages', stream: false },
  );
  t.equal(m.usage.input_tokens, countPromptTokens(fake.requests.at(-1)!.body, 'openai'));
  before = await snapshot();
  const c = await openai.chat.completions.create({ model: 'an-model', messages: [{ role: 'user', content: 'hi' }] });
  await expectCharged(
    t,
    before,
    { input: c.usage!.prompt_tokens, cacheRead: 0, cacheWrite: 0, output: 5 },
    { model: 'an-model', surface: 'chat', stream: false },
  );
});

for (const model of ['an-model', 'oa-model']) {
  t.test(`${model}: a stream that fails mid-way is recorded as failed and billed for what was produced`, async (t) => {
    const before = await snapshot();
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': user.key, 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        max_tokens: 100,
        stream: true,
        messages: [{ role: 'user', content: '[[midstream_error]]' }],
      }),
    });
    const events = readSSE(await res.text());
    t.equal(events.at(-1)?.event, 'error');
    const row = await rowAfter(t, before.rows);
    t.equal(row?.status, 502, 'the usage record says the answer failed, not 200');
    // Three words came before the failure; message_start's output_tokens (1) is a placeholder.
    t.ok(row!.completion_tokens >= 3, `the words produced before the failure are counted (${row!.completion_tokens})`);
    t.equal(before.balance - (await balance()), row!.cost_nano, 'charged exactly the recorded cost');
    t.equal((await gw.services.ledger.balance(user.userId)).reserved, 0n);
  });
}

for (const model of ['an-model', 'oa-model']) {
  t.test(`${model} on the chat surface: a mid-stream failure is recorded as failed too`, async (t) => {
    const before = await snapshot();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: '[[midstream_error]]' }] }),
    });
    const events = readSSE(await res.text());
    t.ok(events.at(-1)?.data?.error, 'ends in data: {"error": …}');
    const row = await rowAfter(t, before.rows);
    t.match(row, { model, surface: 'chat', stream: true, status: 502 });
    t.ok(row!.completion_tokens >= 3, `the three words produced are counted (${row!.completion_tokens})`);
    t.equal(before.balance - (await balance()), row!.cost_nano);
  });
}

t.test('count_tokens: exact from an Anthropic upstream, estimated otherwise, never charged', async (t) => {
  const body = {
    model: 'an-model',
    system: 'You are a weather bot.',
    messages: [{ role: 'user', content: 'What is the weather in Paris today? Please answer briefly.' }],
    tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
  };
  const before = await snapshot();
  fake.reset();
  const exact = await anthropic.messages.countTokens(body as Anthropic.MessageCountTokensParams, {
    headers: { 'anthropic-beta': 'token-counting-2024-11-01', 'anthropic-version': '2025-04-01' },
  });
  const sent = fake.requests.at(-1)!;
  t.equal(sent.path, '/v1/messages/count_tokens', 'asked the Anthropic upstream');
  t.equal(exact.input_tokens, countPromptTokens(body, 'anthropic'), "the upstream's exact count");
  t.same(sent.body, { ...body, model: 'upstream-an' }, 'the request as sent, model mapped');
  t.equal(sent.headers['x-api-key'], process.env.FAKE_ANTHROPIC_KEY);
  t.equal(sent.headers['anthropic-beta'], 'token-counting-2024-11-01');
  t.equal(
    sent.headers['anthropic-version'],
    '2023-06-01',
    'a version date the gateway does not know is replaced by the default',
  );
  t.notMatch(JSON.stringify(sent.headers), user.key, 'never the client key');

  const raw = await postJson(`${gw.url}/v1/messages/count_tokens`, body, { 'x-api-key': user.key });
  t.equal(raw.status, 200);
  t.same(raw.json, { input_tokens: exact.input_tokens }, 'just input_tokens');
  t.equal(raw.headers['request-id'], raw.headers['x-request-id'], 'request-id as Anthropic names it');
  t.equal(fake.requests.at(-1)!.headers['anthropic-version'], '2023-06-01', 'default version when absent');

  fake.reset();
  const estimate = await anthropic.messages.countTokens({
    ...body,
    model: 'oa-model',
  } as Anthropic.MessageCountTokensParams);
  t.ok(estimate.input_tokens > 10, `tokenizer estimate ${estimate.input_tokens}`);
  t.ok(Number.isInteger(estimate.input_tokens));
  t.equal(fake.requests.length, 0, 'an OpenAI upstream has no count_tokens to ask');
  const longer = await anthropic.messages.countTokens({
    ...body,
    model: 'oa-model',
    messages: [{ role: 'user', content: 'word '.repeat(200) }],
  } as Anthropic.MessageCountTokensParams);
  t.ok(longer.input_tokens > estimate.input_tokens, 'the estimate grows with the prompt');

  t.equal(await balance(), before.balance, 'balance unchanged');
  t.equal(await rowCount(), before.rows, 'no usage record');
  t.equal((await gw.services.ledger.balance(user.userId)).reserved, 0n);
});

t.test('count_tokens errors use the Anthropic envelope', async (t) => {
  const noKey = await postJson(`${gw.url}/v1/messages/count_tokens`, {
    model: 'an-model',
    messages: [{ role: 'user', content: 'x' }],
  });
  t.equal(noKey.status, 401);
  t.equal(noKey.json.error.type, 'authentication_error');
  const err = await anthropic.messages
    .countTokens({ model: 'nope', messages: [{ role: 'user', content: 'x' }] })
    .catch((e) => e);
  t.ok(err instanceof Anthropic.NotFoundError);
  const bad = await postJson(`${gw.url}/v1/messages/count_tokens`, { model: 'an-model' }, { 'x-api-key': user.key });
  t.equal(bad.status, 400);
  t.equal(bad.json.type, 'error');
  t.equal(bad.json.error.type, 'invalid_request_error');
  // The upstream failing falls back on the estimate rather than failing the count.
  const fallback = await anthropic.messages.countTokens({
    model: 'an-model',
    messages: [{ role: 'user', content: 'hello [[error:500]]' }],
  });
  t.ok(fallback.input_tokens > 0);
});

t.test('a slow translated stream carries pings between events; the SDK parses it', async (t) => {
  const body = {
    model: 'oa-model',
    max_tokens: 100,
    stream: true,
    messages: [{ role: 'user', content: 'count [[paced:3:1500]]' }],
  };
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': user.key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const events = readSSE(await res.text());
  const types = events.map((e) => e.event);
  const pings = events.filter((e) => e.event === 'ping');
  t.ok(pings.length >= 4, `${pings.length} pings over ~4.5 s of silence at 300 ms`);
  t.ok(
    pings.every((p) => p.data?.type === 'ping'),
    'data {"type":"ping"}',
  );
  t.ok(types.indexOf('ping') > types.indexOf('message_start'), 'no ping before message_start');
  t.ok(types.lastIndexOf('ping') < types.indexOf('message_stop'), 'none after message_stop');
  const firstDelta = types.indexOf('content_block_delta');
  const lastDelta = types.lastIndexOf('content_block_delta');
  t.ok(types.slice(firstDelta, lastDelta).includes('ping'), 'pings between the deltas');
  t.same(sequenceProblems(events.map((e) => e.data)), [], 'otherwise a valid sequence');

  const stream = anthropic.messages.stream({ ...body, stream: undefined } as Anthropic.MessageCreateParamsNonStreaming);
  const seen: string[] = [];
  stream.on('streamEvent', (e) => seen.push(e.type));
  const m = await stream.finalMessage();
  t.equal(m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), 'tok0 tok1 tok2 ');
  t.equal(m.stop_reason, 'end_turn');
  t.equal(m.usage.output_tokens, 3);
});
