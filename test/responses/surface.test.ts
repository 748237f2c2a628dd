// POST /v1/responses through the official openai SDK, on every upstream dialect: a chat model,
// an Anthropic model and a Responses provider (pass-through), whole and streamed, tool rounds
// (freeform tools included), billing, and the state: store, previous_response_id, retrieve,
// input items, delete, owned by the key's user.

import t from 'tap';
import OpenAI from 'openai';
import { reconcile } from '../../src/billing/reconcile.js';
import { startFakeUpstream, TEXT_ANSWER } from '../fake-upstream/server.js';
import { EXTRAS, responsesUpstream, startTestGateway, testCatalogue } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const extra = responsesUpstream(fake.url);
// A Responses-dialect model that sells web search, beside rs-model, which sells nothing extra.
extra.models.push({ ...extra.models[0]!, id: 'rs-search', extras: EXTRAS } as (typeof extra.models)[0]);
const catalogue = testCatalogue({ upstream: fake.url, extra });
const gw = await startTestGateway(t, { upstream: fake.url, catalogue });
const sql = gw.stores.sql;
const u = await gw.user('5');
const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: u.key, maxRetries: 0 });
const MODELS = ['oa-model', 'an-model', 'rs-model'] as const;
const PRICE_IN = 1000n;
const PRICE_OUT = 2000n;
/** The key's latest usage record, once the outbox has written it. */
async function lastCost() {
  await gw.services.outbox.drained();
  const [r] = await sql<
    { id: string; prompt_tokens: number; completion_tokens: number; cost_nano: bigint }[]
  >`SELECT id::text, prompt_tokens, completion_tokens, cost_nano FROM usage_records WHERE user_id = ${u.userId} ORDER BY created_at DESC, id DESC LIMIT 1`;
  return r!;
}
const upstreamPath = { 'oa-model': '/v1/chat/completions', 'an-model': '/v1/messages', 'rs-model': '/v1/responses' };

t.test('a whole answer on every upstream dialect, billed from its usage', async (t) => {
  for (const model of MODELS) {
    fake.reset();
    const r = await client.responses.create({
      model,
      instructions: 'Be brief.',
      input: 'hello there',
      max_output_tokens: 50,
    });
    t.equal(r.object, 'response', `${model}: a response object`);
    t.equal(r.status, 'completed');
    t.match(r.id, /^resp_/);
    t.equal(r.output_text, TEXT_ANSWER, `${model}: the answer's text`);
    t.equal(fake.requests[0]!.path, upstreamPath[model], `${model}: reached its upstream in its dialect`);
    t.ok(r.usage && r.usage.input_tokens > 0 && r.usage.output_tokens > 0, 'usage');
    t.same(r.usage?.output_tokens_details, { reasoning_tokens: 0 }, 'both detail objects, as Codex requires');
    const cap =
      model === 'oa-model'
        ? fake.requests[0]!.body.max_tokens
        : model === 'an-model'
          ? fake.requests[0]!.body.max_tokens
          : fake.requests[0]!.body.max_output_tokens;
    t.equal(cap, 50, `${model}: the cap reserved for, in the upstream's field`);
  }
  await gw.services.outbox.drained();
  const rows = await sql<
    { surface: string; prompt_tokens: number; completion_tokens: number; cost_nano: bigint }[]
  >`SELECT surface, prompt_tokens, completion_tokens, cost_nano FROM usage_records WHERE user_id = ${u.userId}`;
  t.equal(rows.length, 3);
  t.ok(
    rows.every((r) => r.surface === 'responses'),
    'recorded on the responses surface',
  );
  t.ok(
    rows.every((r) => r.cost_nano === BigInt(r.prompt_tokens) * 1000n + BigInt(r.completion_tokens) * 2000n),
    'charged its usage',
  );
});

t.test('streamed on every upstream dialect: the SDK assembles the same answer', async (t) => {
  for (const model of MODELS) {
    const stream = client.responses.stream({ model, input: 'stream please' });
    const types = new Set<string>();
    for await (const ev of stream) types.add(ev.type);
    const final = await stream.finalResponse();
    t.equal(final.output_text, TEXT_ANSWER, `${model}: streamed text`);
    t.ok(
      types.has('response.created') && types.has('response.output_text.delta') && types.has('response.completed'),
      `${model}: the vendor's events`,
    );
    t.ok(final.usage && final.usage.output_tokens > 0, `${model}: usage on the terminal event`);
  }
});

t.test('previous_response_id continues on every upstream dialect; retrieve, input items, delete', async (t) => {
  for (const model of MODELS) {
    const first = await client.responses.create({ model, input: 'My name is Ada.' });
    fake.reset();
    const second = await client.responses.create({ model, input: 'What is my name?', previous_response_id: first.id });
    t.equal(second.previous_response_id, first.id, `${model}: echoed`);
    const sent = JSON.stringify(fake.requests[0]!.body);
    if (model === 'rs-model') {
      t.equal(
        fake.requests[0]!.body.previous_response_id,
        first.id,
        'a Responses upstream that kept the turn is sent the id',
      );
      t.notOk(sent.includes('My name is Ada.'), 'and not the history');
    } else {
      t.ok(
        sent.includes('My name is Ada.') && sent.includes(TEXT_ANSWER),
        `${model}: the history is replayed, input and answer`,
      );
      t.notOk('previous_response_id' in fake.requests[0]!.body, 'no id the upstream cannot know');
    }
    const got = await client.responses.retrieve(second.id);
    t.equal(got.id, second.id, 'retrieved');
    t.equal(got.output_text, TEXT_ANSWER);
    const items = await client.responses.inputItems.list(second.id, { order: 'asc' });
    const texts = items.data.map((i: any) => JSON.stringify(i));
    t.ok(
      texts.some((x) => x.includes('My name is Ada.')) && texts.at(-1)!.includes('What is my name?'),
      'input items: the history, then the new input',
    );
    t.ok(
      items.data.every((i: any) => typeof i.id === 'string'),
      'each with an id',
    );
  }
  const gone = await client.responses.create({ model: 'oa-model', input: 'forget me' });
  const deleted = await client.responses.delete(gone.id).then(
    () => true,
    (e: unknown) => e,
  );
  t.equal(deleted, true, 'deleted');
  const after = await client.responses.retrieve(gone.id).catch((e: unknown) => e);
  t.type(after, OpenAI.NotFoundError, 'then not found');
  const cont = await client.responses
    .create({ model: 'oa-model', input: 'x', previous_response_id: gone.id })
    .catch((e: unknown) => e);
  t.type(cont, OpenAI.NotFoundError, 'nor continued from');
  t.equal((cont as InstanceType<typeof OpenAI.NotFoundError>).param, 'previous_response_id');
});

t.test('store: false keeps nothing; another user sees nothing', async (t) => {
  const r = await client.responses.create({ model: 'an-model', input: 'ephemeral', store: false });
  t.equal((r as unknown as { store: boolean }).store, false, 'echoed');
  t.type(await client.responses.retrieve(r.id).catch((e: unknown) => e), OpenAI.NotFoundError, 'not kept');
  const mine = await client.responses.create({ model: 'an-model', input: 'mine' });
  const other = await gw.user('1');
  const stranger = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: other.key, maxRetries: 0 });
  t.type(
    await stranger.responses.retrieve(mine.id).catch((e: unknown) => e),
    OpenAI.NotFoundError,
    "another user's id is not found",
  );
  t.type(
    await stranger.responses
      .create({ model: 'an-model', input: 'x', previous_response_id: mine.id })
      .catch((e: unknown) => e),
    OpenAI.NotFoundError,
  );
  t.type(await stranger.responses.delete(mine.id).catch((e: unknown) => e), OpenAI.NotFoundError);
  t.equal((await client.responses.retrieve(mine.id)).id, mine.id, 'still there for its owner');
});

t.test('a tool round through each dialect, and a freeform tool where the upstream has none', async (t) => {
  const tools = [
    {
      type: 'function' as const,
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
      strict: false,
    },
  ];
  for (const model of MODELS) {
    const first = await client.responses.create({ model, input: 'weather? [[tool_round]]', tools });
    const call = first.output.find((o) => o.type === 'function_call') as any;
    t.equal(call?.name, 'get_weather', `${model}: a function_call item`);
    t.same(JSON.parse(call.arguments), { city: 'Paris' });
    const second = await client.responses.create({
      model,
      tools,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp":21}' }],
    });
    t.equal(second.output_text, TEXT_ANSWER, `${model}: answered once the result is back`);
  }
  fake.reset();
  const patch = { type: 'custom' as const, name: 'apply_patch', description: 'Edits files.' };
  const r = await client.responses.create({
    model: 'an-model',
    input: 'edit [[tool_round:apply_patch:{"input":"***Begin"}]]',
    tools: [patch],
  });
  const upTool = fake.requests[0]!.body.tools[0];
  t.same(upTool.input_schema.required, ['input'], 'the freeform tool reached Anthropic as a function of one string');
  const item = r.output.find((o) => o.type === 'custom_tool_call') as any;
  t.equal(item?.input, '***Begin', 'and its call came back as a custom_tool_call with the raw text');
});

t.test(
  'hosted tools the model does not sell are taken out and named; a tool_choice that insists on one is refused',
  async (t) => {
    fake.reset();
    const fn = {
      type: 'function' as const,
      name: 'get_time',
      parameters: { type: 'object', properties: {} },
      strict: false,
    };
    const { data, response } = await client.responses
      .create({
        model: 'rs-model',
        input: 'x',
        tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] } as any, fn],
      })
      .withResponse();
    t.equal(data.status, 'completed', 'served');
    t.same(
      fake.requests[0]!.body.tools.map((x: any) => x.type),
      ['function'],
      'the upstream got the function alone',
    );
    t.equal(response.headers.get('x-airouter-dropped-tools'), 'file_search', 'the answer names what was taken out');
    fake.reset();
    const hidden = await client.responses
      .create({
        model: 'rs-model',
        input: [
          { type: 'additional_tools', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }, fn] } as any,
          { role: 'user', content: 'x' },
        ],
      })
      .withResponse();
    t.same(
      fake.requests[0]!.body.input[0].tools.map((x: any) => x.type),
      ['function'],
      "from an input item's tools too",
    );
    t.equal(hidden.response.headers.get('x-airouter-dropped-tools'), 'code_interpreter');
    const forced = await client.responses
      .create({
        model: 'rs-model',
        input: 'x',
        tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] } as any],
        tool_choice: { type: 'file_search' } as any,
      })
      .catch((e: unknown) => e);
    t.type(forced, OpenAI.BadRequestError);
    t.equal((forced as InstanceType<typeof OpenAI.BadRequestError>).param, 'tool_choice');
    t.match((forced as Error).message, /file_search/);
    const untyped = await client.responses
      .create({ model: 'rs-model', input: 'x', tools: [{ name: 'x' } as any] })
      .catch((e: unknown) => e);
    t.type(untyped, OpenAI.BadRequestError, "a tool without a type is the client's mistake");
    const fallback = await client.responses
      .create({ model: 'fallback-model', input: 'x', tools: [{ type: 'web_search' } as any] })
      .withResponse();
    t.equal(
      fallback.response.headers.get('x-airouter-dropped-tools'),
      'web_search',
      'web search on a model that does not price it: taken out',
    );
  },
);

t.test('a sold hosted tool on a route of another dialect is not run, so not charged, and is named', async (t) => {
  const before = await lastCost();
  const { response } = await client.responses
    .create({ model: 'oa-model', input: 'x', tools: [{ type: 'web_search' } as any] })
    .withResponse();
  t.equal(response.headers.get('x-airouter-dropped-tools'), 'web_search', 'the chat upstream has no web search');
  const r = await lastCost();
  t.not(r.id, before?.id);
  t.equal(
    r.cost_nano,
    BigInt(r.prompt_tokens) * PRICE_IN + BigInt(r.completion_tokens) * PRICE_OUT,
    'tokens only, no search fee',
  );
  const same = await client.responses
    .create({ model: 'rs-search', input: 'x', tools: [{ type: 'web_search' } as any] })
    .withResponse();
  t.equal(same.response.headers.get('x-airouter-dropped-tools'), null, 'a Responses upstream runs it');
  const s = await lastCost();
  t.equal(
    s.cost_nano,
    BigInt(s.prompt_tokens) * PRICE_IN + BigInt(s.completion_tokens) * PRICE_OUT + 10_000_000n,
    'and its fee is charged',
  );
});

t.test('the hold covers the replayed history: a continuation a small balance cannot carry is a 402', async (t) => {
  const poor = await gw.user('0.05');
  const c = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: poor.key, maxRetries: 0 });
  // About 30,000 tokens held at $1.25/M ($0.0375) plus the output cap: within $0.05.
  const first = await c.responses.create({ model: 'oa-model', input: 'x '.repeat(15_000) });
  const small = 'y '.repeat(5_000);
  const alone = await c.responses.create({ model: 'oa-model', input: small });
  t.equal(alone.status, 'completed', 'the new input alone is held and answered');
  const continued = await c.responses
    .create({ model: 'oa-model', input: small, previous_response_id: first.id })
    .catch((e: unknown) => e);
  t.equal((continued as { status?: number }).status, 402, 'with its history it is more than the balance covers');
  await gw.services.outbox.drained();
  const [{ balance_nano }] = await sql<
    { balance_nano: bigint }[]
  >`SELECT balance_nano FROM users WHERE id = ${poor.userId}`;
  t.ok(balance_nano >= 0n, 'never below zero');
});

t.test('the books', async (t) => {
  await gw.services.outbox.drained();
  const report = await reconcile(sql, gw.stores.hot);
  t.same(report.mismatches, []);
  t.same(report.hotMismatches, []);
});

t.test(
  'a plain GET /v1/responses lists nothing (a WebSocket upgrade there is the WebSocket mode: websocket.test.ts)',
  async (t) => {
    const plain = await fetch(`${gw.url}/v1/responses`, { headers: { authorization: `Bearer ${u.key}` } });
    t.equal(plain.status, 404, 'a plain GET lists nothing');
    await plain.arrayBuffer();
  },
);
