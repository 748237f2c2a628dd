// The chat surface translated to an Anthropic upstream (an-model), with the official openai
// client: text, streams, tools, stop reasons, cached usage, the max_tokens default, and what
// the Anthropic upstream receives. (Single and parallel tool calls, streamed and not, are in
// test/chat/answers.test.ts; this file covers the rest of the translation.)
import t from 'tap';
import OpenAI from 'openai';
import { startFakeUpstream, countPromptTokens, TEXT_ANSWER, THINKING_TEXT } from '../fake-upstream/server.js';
import { startTestGateway } from '../helpers/gateway.js';
import { readSSE } from '../helpers/messages.js';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// Hand-made streams for shapes the recordings lack, replayed like the recordings are.
const crafted = mkdtempSync(path.join(tmpdir(), 'airouter-crafted-'));
t.teardown(() => rmSync(crafted, { recursive: true, force: true }));
mkdirSync(path.join(crafted, 'anthropic'));
const sse = (events: object[]) => events.map((e: any) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
// A tool without parameters, as Anthropic streams it: input {} and one empty input_json_delta.
writeFileSync(
  path.join(crafted, 'anthropic/tool_no_arguments.sse'),
  sse([
    {
      type: 'message_start',
      message: {
        id: 'msg_01Crafted',
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
      },
    },
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_01NoArgs', name: 'get_time', input: {} },
    },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 12 } },
    { type: 'message_stop' },
  ]),
);
writeFileSync(
  path.join(crafted, 'anthropic/tool_no_arguments.json'),
  JSON.stringify({
    id: 'msg_01Crafted',
    type: 'message',
    role: 'assistant',
    model: 'claude-x',
    stop_reason: 'tool_use',
    stop_sequence: null,
    content: [{ type: 'tool_use', id: 'toolu_01NoArgs', name: 'get_time', input: {} }],
    usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 12 },
  }),
);

const fake = await startFakeUpstream({ fixturesDir: crafted });
t.teardown(() => fake.close());
const gw = await startTestGateway(t, { upstream: fake.url });
const user = await gw.user('10');
const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: user.key, maxRetries: 0 });
const MODEL = 'an-model';

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;
const say = (content: string): Msg[] => [{ role: 'user', content }];
const lastUpstream = () => fake.requests.filter((r) => r.path === '/v1/messages').at(-1)!;
const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
    },
  },
];

async function collect(
  messages: Msg[],
  extra: Partial<OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming> = {},
) {
  const stream = await client.chat.completions.create({
    model: MODEL,
    stream: true,
    stream_options: { include_usage: true },
    messages,
    ...extra,
  });
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  const finish = chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean);
  const usage = chunks.filter((c) => c.usage).map((c) => c.usage);
  return { chunks, text, finish, usage };
}

t.test("text: a chat.completion with the client's model name, content and usage", async (t) => {
  const r = await client.chat.completions.create({ model: MODEL, messages: say('Say hello') });
  t.equal(r.object, 'chat.completion');
  t.match(r.id, /^chatcmpl-/);
  t.equal(r.model, MODEL);
  t.equal(r.choices.length, 1);
  t.equal(r.choices[0].message.role, 'assistant');
  t.equal(r.choices[0].message.content, TEXT_ANSWER);
  t.equal(r.choices[0].finish_reason, 'stop');
  const sent = lastUpstream();
  t.equal(r.usage!.prompt_tokens, countPromptTokens(sent.body, 'anthropic'));
  t.equal(r.usage!.completion_tokens, 5);
  t.equal(r.usage!.total_tokens, r.usage!.prompt_tokens + 5);
  t.same(sent.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }] }]);
  t.equal(sent.body.model, 'upstream-an');
  t.equal(sent.headers['x-api-key'], process.env.FAKE_ANTHROPIC_KEY, 'the Anthropic upstream gets its own key');
  t.equal(sent.headers['anthropic-version'], '2023-06-01', 'and the default version');
  t.notOk(sent.headers.authorization, 'no Bearer: Anthropic takes x-api-key');
  t.notMatch(JSON.stringify(sent.headers), user.key, 'never the client key');
});

t.test('stream: chunks in OpenAI form, [DONE], usage only when asked', async (t) => {
  const { chunks, text, finish, usage } = await collect(say('Say hello'));
  t.equal(text, TEXT_ANSWER);
  t.same(finish, ['stop'], 'one finish_reason');
  t.equal(chunks[0].choices[0].delta.role, 'assistant', 'the first chunk carries the role');
  t.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === MODEL && c.id === chunks[0].id));
  t.equal(usage.length, 1, 'one usage chunk');
  t.same(chunks.at(-1)!.choices, [], 'the usage chunk has no choices');
  t.equal(usage[0]!.completion_tokens, 5);

  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, stream: true, messages: say('Say hello') }),
  });
  t.match(res.headers.get('content-type'), /^text\/event-stream/);
  const body = await res.text();
  t.ok(body.endsWith('data: [DONE]\n\n'));
  t.notMatch(body, /^event:/m, 'no Anthropic event lines on the chat surface');
  t.notMatch(body, /"usage":\{/, 'no usage chunk when not asked for');
  t.equal(
    readSSE(body)
      .filter((e) => e.data?.choices?.[0]?.delta?.content)
      .map((e) => e.data.choices[0].delta.content)
      .join(''),
    TEXT_ANSWER,
  );
  // Billing still needs the counts: the Anthropic upstream always reports them, nothing to ask.
  t.equal(lastUpstream().body.stream, true);
  t.notOk('stream_options' in lastUpstream().body, 'no OpenAI-only field sent to Anthropic');
});

t.test('stop reasons: end_turn → stop, max_tokens → length, tool_use → tool_calls, stop_sequence → stop', async (t) => {
  const cases: Array<[string, string, Partial<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming>]> = [
    ['[[text]]', 'stop', {}],
    ['[[max_tokens]]', 'length', { max_tokens: 3 }],
    ['[[tools]]', 'tool_calls', { tools }],
    ['[[stop_sequence]]', 'stop', { stop: ['STOP'] }],
  ];
  for (const [prompt, finish, extra] of cases) {
    const r = await client.chat.completions.create({ model: MODEL, messages: say(prompt), ...extra });
    t.equal(r.choices[0].finish_reason, finish, `${prompt} whole`);
    const s = await collect(say(prompt), extra as any);
    t.same(s.finish, [finish], `${prompt} streamed`);
  }
  t.same(lastUpstream().body.stop_sequences, ['STOP'], 'stop → stop_sequences');
});

t.test('tools streamed: the text Claude says first, then the call, indices counting calls only', async (t) => {
  const { chunks, text, finish } = await collect(say('weather [[tools]]'), { tools });
  t.equal(text, 'Let me check.', 'the preamble text arrives as content');
  t.same(finish, ['tool_calls']);
  const deltas = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
  t.ok(deltas.length >= 2);
  t.ok(
    deltas.every((d) => d.index === 0),
    'the only call is index 0 although it is Anthropic block 1',
  );
  t.match(deltas[0], { index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } });
  t.match(deltas[0].id, /^toolu_/, 'the Anthropic id is kept');
  t.ok(
    deltas.slice(1).every((d) => d.id === undefined && d.function?.name === undefined),
    'later deltas carry arguments only',
  );
  t.same(JSON.parse(deltas.map((d) => d.function?.arguments ?? '').join('')), { city: 'Paris' });
  const sent = lastUpstream().body;
  t.same(sent.tools, [
    {
      name: 'get_weather',
      description: 'Weather in a city',
      input_schema: { type: 'object', properties: { city: { type: 'string' } } },
    },
  ]);
});

t.test('a tool round trip: the tool message reaches Anthropic as a tool_result block', async (t) => {
  const first = await client.chat.completions.create({ model: MODEL, tools, messages: say('weather [[tools]]') });
  const call = first.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
  t.equal(first.choices[0].message.content, 'Let me check.');
  const history: Msg[] = [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'weather [[tools]]' },
    first.choices[0].message as Msg,
    { role: 'tool', tool_call_id: call.id, content: 'sunny, 21 C' },
    { role: 'user', content: 'thanks [[echo]]' },
  ];
  const r = await client.chat.completions.create({ model: MODEL, tools, messages: history });
  const echoed = JSON.parse(r.choices[0].message.content!);
  t.same(echoed, lastUpstream().body);
  t.equal(echoed.system, 'You are terse.', 'system message → system');
  t.same(
    echoed.messages.map((m: any) => m.role),
    ['user', 'assistant', 'user'],
  );
  t.same(
    echoed.messages[1].content,
    [
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: call.id, name: 'get_weather', input: { city: 'Paris' } },
    ],
    'the assistant turn as Anthropic blocks, arguments as an object',
  );
  t.same(
    echoed.messages[2].content,
    [
      { type: 'tool_result', tool_use_id: call.id, content: 'sunny, 21 C' },
      { type: 'text', text: 'thanks [[echo]]' },
    ],
    'tool message → tool_result first in the next user turn',
  );
  t.equal(echoed.max_tokens, 1000);
});

t.test("no max_tokens from a chat client: the Anthropic upstream gets the model's max output", async (t) => {
  await client.chat.completions.create({ model: MODEL, messages: say('hi') });
  t.equal(lastUpstream().body.max_tokens, 1000, 'max_output_tokens of an-model');
  await client.chat.completions.create({ model: MODEL, stream: true, messages: say('hi') }).then(async (s) => {
    for await (const _ of s);
  });
  t.equal(lastUpstream().body.max_tokens, 1000, 'streamed too');
  await client.chat.completions.create({ model: MODEL, max_completion_tokens: 77, messages: say('hi') });
  t.equal(lastUpstream().body.max_tokens, 77, 'max_completion_tokens → max_tokens');
  await client.chat.completions.create({ model: MODEL, max_tokens: 55, messages: say('hi') });
  t.equal(lastUpstream().body.max_tokens, 55);
});

t.test('cached usage: prompt_tokens = input + cache_read + cache_creation; cached_tokens = cache_read', async (t) => {
  const prompt = 'A long prompt that is mostly cached [[cached]] '.repeat(20);
  const r = await client.chat.completions.create({ model: MODEL, messages: say(prompt) });
  const sent = lastUpstream().body;
  // What the fake reported, in Anthropic terms (see scenarios.ts: 80% read, 10 written).
  const total = countPromptTokens(sent, 'anthropic');
  const cacheRead = Math.floor(total * 0.8);
  const cacheWrite = 10;
  const input = total - cacheRead;
  const u = r.usage as any;
  t.equal(u.prompt_tokens, input + cacheRead + cacheWrite);
  t.equal(u.cached_tokens, cacheRead);
  t.equal(u.prompt_tokens_details.cached_tokens, cacheRead);
  t.equal(u.completion_tokens, 5);
  t.equal(u.total_tokens, u.prompt_tokens + 5);

  const s = await collect(say(prompt));
  const su = s.usage[0] as any;
  t.same(
    [su.prompt_tokens, su.cached_tokens, su.prompt_tokens_details.cached_tokens, su.completion_tokens],
    [input + cacheRead + cacheWrite, cacheRead, cacheRead, 5],
    'the streamed usage chunk says the same',
  );
});

t.test('thinking from Anthropic reaches a chat client as reasoning_content, the signature does not', async (t) => {
  const r = await client.chat.completions.create({ model: MODEL, messages: say('think [[thinking]]') });
  const m = r.choices[0].message as any;
  t.equal(m.reasoning_content, THINKING_TEXT);
  t.equal(m.content, TEXT_ANSWER);
  t.notMatch(JSON.stringify(r), /signature/);
  const s = await collect(say('think [[thinking]]'));
  t.equal(s.chunks.map((c) => (c.choices[0]?.delta as any)?.reasoning_content ?? '').join(''), THINKING_TEXT);
  t.equal(s.text, TEXT_ANSWER);
  t.notMatch(JSON.stringify(s.chunks), /signature/);
});

t.test('chat-only parameters: mapped where Anthropic has them', async (t) => {
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const r = await client.chat.completions.create({
    model: MODEL,
    temperature: 1.5,
    top_p: 0.9,
    user: 'end-user-7',
    seed: 3,
    presence_penalty: 1,
    n: 1,
    tools,
    tool_choice: 'required',
    parallel_tool_calls: false,
    messages: [
      { role: 'developer', content: 'Dev rules.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look [[echo]]' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        ],
      },
    ],
  });
  const echoed = JSON.parse(r.choices[0].message.content!);
  t.equal(echoed.system, 'Dev rules.', 'developer → system');
  t.equal(echoed.temperature, 1, "temperature clamped to Anthropic's 0..1");
  t.equal(echoed.top_p, 0.9);
  t.same(echoed.metadata, { user_id: 'end-user-7' });
  t.same(
    echoed.tool_choice,
    { type: 'any', disable_parallel_tool_use: true },
    'required → any, parallel_tool_calls:false → disable_parallel_tool_use',
  );
  t.same(echoed.messages[0].content[1], {
    type: 'image',
    source: { type: 'base64', media_type: 'image/png', data: png },
  });
  for (const k of ['seed', 'presence_penalty', 'n', 'user', 'parallel_tool_calls'])
    t.notOk(k in echoed, `${k} dropped`);
});

t.test('a tool call without parameters: arguments "{}", streamed and not, never ""', async (t) => {
  const whole = await client.chat.completions.create({
    model: MODEL,
    messages: say('[[replay:anthropic/tool_no_arguments.json]]'),
  });
  const call = whole.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
  t.equal(call.function.arguments, '{}');
  const { chunks, finish } = await collect(say('[[replay:anthropic/tool_no_arguments.sse]]'));
  t.same(finish, ['tool_calls']);
  const deltas = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
  t.match(deltas[0], { index: 0, id: 'toolu_01NoArgs', function: { name: 'get_time' } });
  t.equal(
    deltas.map((d) => d.function?.arguments ?? '').join(''),
    '{}',
    'JSON a client can parse, as OpenAI itself sends',
  );
  const final = await client.chat.completions
    .stream({ model: MODEL, messages: say('[[replay:anthropic/tool_no_arguments.sse]]') })
    .finalChatCompletion();
  t.same(JSON.parse((final.choices[0].message.tool_calls![0] as any).function.arguments), {});
});
