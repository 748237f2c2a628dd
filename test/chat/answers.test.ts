// The chat surface with the official openai client: answers, streams, tools, pass-through
// of unknown fields, and exact billing.
import t from 'tap';
import OpenAI from 'openai';
import { startFakeUpstream, countPromptTokens } from '../fake-upstream/server.js';
import { startTestGateway, PRICES } from '../helpers/gateway.js';
import { eventually } from '../helpers/http.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, { upstream: fake.url });
const user = await gw.user('10');
const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: user.key, maxRetries: 0 });

const nanoPerM = (usd: number) => BigInt(Math.round(usd * 1e9));
function expectedCost(u: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number }) {
  const cached = u.cached_tokens ?? 0;
  const total =
    BigInt(u.prompt_tokens - cached) * nanoPerM(PRICES.pricing.input) +
    BigInt(cached) * nanoPerM(PRICES.pricing.cache_read) +
    BigInt(u.completion_tokens) * nanoPerM(PRICES.pricing.output);
  return (total + 999_999n) / 1_000_000n;
}
const hotBalance = async () => (await gw.services.ledger.balance(user.userId)).balance;

t.test('non-stream answer: content, chatcmpl id, usage with cached_tokens at top level', async (t) => {
  const r = await client.chat.completions.create({
    model: 'oa-model',
    messages: [{ role: 'user', content: 'Say hello' }],
  });
  t.match(r.id, /^chatcmpl-/);
  t.equal(r.choices[0].message.content, 'Hello from the fake upstream.');
  t.equal(r.choices[0].finish_reason, 'stop');
  const usage = r.usage as any;
  t.equal(usage.prompt_tokens, countPromptTokens({ messages: [{ role: 'user', content: 'Say hello' }] }, 'openai'));
  t.equal(usage.cached_tokens, 0);
  t.equal(usage.prompt_tokens_details.cached_tokens, 0);
  t.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
});

t.test('the balance drops by exactly the computed cost; cached tokens at the cache price', async (t) => {
  const before = await hotBalance();
  const r = await client.chat.completions.create({
    model: 'oa-model',
    messages: [{ role: 'user', content: 'A long prompt that is mostly cached [[cached]] '.repeat(20) }],
  });
  const usage = r.usage as any;
  t.ok(usage.cached_tokens > 0, 'cached tokens reported');
  t.equal(usage.prompt_tokens_details.cached_tokens, usage.cached_tokens);
  const cost = expectedCost(usage);
  t.equal(before - (await hotBalance()), cost, 'hot balance charged the exact cost');
  await gw.services.outbox.drained();
  const [row] = await gw.services.sql<{ cost_nano: bigint; cached_tokens: number; status: number }[]>`
    SELECT cost_nano, cached_tokens, status FROM usage_records WHERE user_id = ${user.userId} ORDER BY id DESC LIMIT 1`;
  t.equal(row.cost_nano, cost, 'usage record carries the same cost');
  t.equal(row.cached_tokens, usage.cached_tokens);
  t.equal((await gw.services.ledger.balance(user.userId)).reserved, 0n, 'nothing left reserved');
});

t.test('stream without include_usage: no usage chunk, ends with [DONE]', async (t) => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'oa-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /text\/event-stream/);
  const text = await res.text();
  t.ok(text.endsWith('data: [DONE]\n\n'));
  t.notMatch(text, /"choices":\[\]/, 'usage chunk dropped');
  t.notMatch(text, /"usage":\{/);
  // ...while the upstream was asked for usage anyway, so billing has it.
  t.same(fake.requests.at(-1)!.body.stream_options, { include_usage: true });
});

t.test('stream with include_usage: the usage chunk reaches the client', async (t) => {
  const stream = await client.chat.completions.create({
    model: 'oa-model',
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'hi' }],
  });
  let text = '';
  let usage: any;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  t.equal(text, 'Hello from the fake upstream.');
  t.ok(usage && usage.completion_tokens > 0);
});

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  },
  {
    type: 'function',
    function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } },
  },
];

for (const model of ['oa-model', 'an-model']) {
  t.test(`${model}: tool calls, single and parallel, streamed and not`, async (t) => {
    const one = await client.chat.completions.create({
      model,
      tools,
      messages: [{ role: 'user', content: 'weather? [[tools]]' }],
    });
    t.equal(one.choices[0].finish_reason, 'tool_calls');
    t.equal(one.choices[0].message.tool_calls?.length, 1);
    const call = one.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    t.equal(call.function.name, 'get_weather');
    t.same(JSON.parse(call.function.arguments), { city: 'Paris' });

    const par = await client.chat.completions.create({
      model,
      tools,
      messages: [{ role: 'user', content: 'both [[parallel_tools]]' }],
    });
    t.same(
      par.choices[0].message.tool_calls?.map((c: any) => [c.function.name, JSON.parse(c.function.arguments)]),
      [
        ['get_weather', { city: 'Paris' }],
        ['get_time', { tz: 'Europe/Paris' }],
      ],
    );

    const runner = client.chat.completions.stream({
      model,
      tools,
      messages: [{ role: 'user', content: 'both [[parallel_tools]]' }],
    });
    const final = await runner.finalChatCompletion();
    const calls = final.choices[0].message.tool_calls as any[];
    t.same(
      calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]),
      [
        ['get_weather', { city: 'Paris' }],
        ['get_time', { tz: 'Europe/Paris' }],
      ],
    );
    t.ok(calls.every((c) => typeof c.id === 'string' && c.id.length > 0));
    t.equal(final.choices[0].finish_reason, 'tool_calls');
  });
}

t.test('unknown fields reach the upstream unchanged; the upstream sees its own key only', async (t) => {
  fake.reset();
  const extra = {
    seed: 7,
    logit_bias: { '50256': -100 },
    metadata: { team: 'a' },
    vendor_thing: { nested: [1, 'two', null] },
  };
  await client.chat.completions.create({
    model: 'oa-model',
    messages: [{ role: 'user', content: 'x' }],
    ...(extra as any),
  });
  const seen = fake.requests.at(-1)!;
  for (const [k, v] of Object.entries(extra)) t.same(seen.body[k], v, `${k} forwarded`);
  t.equal(seen.body.model, 'upstream-oa', 'model mapped to the route name');
  t.equal(seen.headers.authorization, `Bearer ${process.env.FAKE_OPENAI_KEY}`);
  t.notMatch(JSON.stringify(seen.headers), user.key, 'the client key never reaches the upstream');
});

t.test('usage records reach Postgres with the surface, stream flag and status', async (t) => {
  const rows = await eventually(async () => {
    const r = await gw.services.sql<
      { surface: string; stream: boolean; status: number }[]
    >`SELECT surface, stream, status FROM usage_records WHERE user_id = ${user.userId}`;
    return r.length >= 8 ? r : undefined;
  });
  t.ok(rows && rows.every((r) => r.surface === 'chat' && r.status === 200));
  t.ok(rows!.some((r) => r.stream) && rows!.some((r) => !r.stream));
});
