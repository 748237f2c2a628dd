import t, { type TAP } from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { from, lastValueFrom, toArray } from 'rxjs';
import { GatewayError, type ErrorKind } from '../../src/errors.js';
import { parseSSE } from '../helpers/sse.js';
import { openai, RAW_ARGUMENTS_KEY } from '../../src/dialects/openai/index.js';
import type { RenderContext } from '../../src/dialects/dialect.js';
import type { IRResponse, IRStopReason, IRStreamEvent, IRUsage } from '../../src/dialects/ir.js';
import { FIXTURES_DIR } from '../fixtures/index.js';

const fixtures = path.join(FIXTURES_DIR, 'openai');
const sseFixtures = readdirSync(fixtures)
  .filter((f) => f.endsWith('.sse'))
  .sort();
const jsonFixtures = readdirSync(fixtures)
  .filter((f) => f.endsWith('.json'))
  .sort();

const ctx = (includeUsage: boolean): RenderContext => ({
  model: 'my-model',
  id: 'chatcmpl-test',
  created: 1700000000,
  includeUsage,
});

/** Bytes in small uneven pieces, so event boundaries fall inside chunks. */
function pieces(bytes: Buffer, size = 37): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

async function decode(bytes: Buffer): Promise<IRStreamEvent[]> {
  return lastValueFrom(from(pieces(bytes)).pipe(parseSSE(), openai.decodeStream(), toArray()));
}

async function encode(events: IRStreamEvent[], c: RenderContext): Promise<Buffer> {
  return Buffer.concat(await lastValueFrom(from(events).pipe(openai.encodeStream(c), toArray())));
}

/** What a stream of IR events says, block by block. */
function summarize(events: IRStreamEvent[]) {
  const blocks: Array<{ type: string; text: string; id?: string; name?: string }> = [];
  let stop: Extract<IRStreamEvent, { type: 'stop' }> | undefined;
  for (const e of events) {
    if (e.type === 'block_start') {
      blocks[e.index] = { type: e.block.type, text: '' };
      if (e.block.type === 'tool_use') Object.assign(blocks[e.index]!, { id: e.block.id, name: e.block.name });
    } else if (e.type === 'delta') {
      const d = e.delta;
      blocks[e.index]!.text +=
        d.type === 'text' ? d.text : d.type === 'thinking' ? d.thinking : d.type === 'input_json' ? d.partialJson : '';
    } else if (e.type === 'stop') stop = e;
  }
  return {
    text: blocks
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join(''),
    tools: blocks.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id, name: b.name, arguments: b.text })),
    stopReason: stop?.stopReason,
    usage: stop?.usage,
  };
}

/** A deliberately naive reading of the fixture, independent of the decoder under test. */
function reference(file: string) {
  let text = '';
  const tools: Array<{ id: string; name: string; arguments: string }> = [];
  let usage: Record<string, any> | undefined;
  let finish: string | undefined;
  for (const line of readFileSync(path.join(fixtures, file), 'utf8').split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const chunk = JSON.parse(line.slice(6));
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      if (choice.finish_reason) finish = choice.finish_reason;
      text += (choice.delta.content ?? '') + (choice.delta.refusal ?? '');
      for (const tc of choice.delta.tool_calls ?? []) {
        tools[tc.index] ??= { id: tc.id, name: tc.function.name, arguments: '' };
        tools[tc.index]!.arguments += tc.function.arguments ?? '';
      }
    }
  }
  return { text, tools, usage: usage!, finish: finish! };
}

const baseBody = () => ({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });

function expectInvalid(
  t: TAP | Parameters<Parameters<TAP['test']>[0]>[0],
  body: unknown,
  param: string | undefined,
  label: string,
) {
  try {
    openai.parseRequest(body);
    t.fail(`${label}: expected a validation error`);
  } catch (err) {
    t.ok(err instanceof GatewayError, `${label}: GatewayError`);
    const e = err as GatewayError;
    t.equal(e.kind, 'invalid_request', `${label}: kind`);
    t.equal(e.status, 400, `${label}: status`);
    t.equal(e.param, param, `${label}: param`);
    if (param) t.match(e.message, param, `${label}: message names the field`);
    t.ok(e.message.endsWith('.'), `${label}: message is a sentence`);
  }
}

t.test('parseRequest maps a full request to the IR', async (t) => {
  const ir = openai.parseRequest({
    model: 'gpt-4o',
    messages: [
      { role: 'system', content: 'Be brief.' },
      {
        role: 'developer',
        content: [
          { type: 'text', text: 'Use' },
          { type: 'text', text: 'tools.' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'low' } },
          { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Checking.',
        reasoning_content: 'The user wants weather.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{"tz": "Eur' } },
          { id: 'call_3', type: 'function', function: { name: 'noop', arguments: '' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'Sunny' },
      { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '12:00' }] },
      { role: 'tool', tool_call_id: 'call_3', content: 'ok' },
      { role: 'user', content: 'Thanks' },
    ],
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 100,
    max_completion_tokens: 200,
    temperature: 0.5,
    top_p: 0.9,
    stop: 'END',
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      },
      { type: 'function', function: { name: 'noop' } },
    ],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    parallel_tool_calls: false,
    user: 'u-42',
    n: 1,
    logit_bias: { '50256': -100 },
  });
  t.strictSame(ir.system, ['Be brief.', 'Use\ntools.']);
  t.strictSame(ir.messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user wants weather.' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_2', name: 'get_time', input: { [RAW_ARGUMENTS_KEY]: '{"tz": "Eur' } },
        { type: 'tool_use', id: 'call_3', name: 'noop', input: {} },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', toolUseId: 'call_1', content: 'Sunny' },
        { type: 'tool_result', toolUseId: 'call_2', content: '12:00' },
        { type: 'tool_result', toolUseId: 'call_3', content: 'ok' },
        { type: 'text', text: 'Thanks' },
      ],
    },
  ]);
  t.equal(ir.model, 'gpt-4o');
  t.equal(ir.stream, true);
  t.equal(ir.includeUsage, true);
  t.equal(ir.maxTokens, 200, 'max_completion_tokens wins over max_tokens');
  t.equal(ir.temperature, 0.5);
  t.equal(ir.topP, 0.9);
  t.strictSame(ir.stop, ['END']);
  t.strictSame(ir.tools, [
    {
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
      description: 'Weather',
    },
    { name: 'noop', parameters: { type: 'object', properties: {} } },
  ]);
  t.strictSame(ir.toolChoice, { type: 'tool', name: 'get_weather' });
  t.equal(ir.parallelToolCalls, false);
  t.equal(ir.user, 'u-42');
});

t.test('parseRequest defaults and simple forms', async (t) => {
  const ir = openai.parseRequest({
    ...baseBody(),
    max_tokens: 50,
    stop: ['a', 'b'],
    tool_choice: 'required',
    stream: null,
    temperature: null,
    stream_options: null,
  });
  t.equal(ir.stream, false);
  t.equal(ir.includeUsage, false);
  t.equal(ir.maxTokens, 50);
  t.strictSame(ir.stop, ['a', 'b']);
  t.strictSame(ir.toolChoice, { type: 'required' });
  t.equal(ir.temperature, undefined);
  t.equal(ir.tools, undefined);
  t.strictSame(ir.system, []);
  t.strictSame(ir.messages, [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  for (const choice of ['auto', 'none'] as const) {
    t.strictSame(openai.parseRequest({ ...baseBody(), tool_choice: choice }).toolChoice, { type: choice });
  }
  t.equal(
    openai.parseRequest({ ...baseBody(), stream: true, stream_options: { include_usage: false } }).includeUsage,
    false,
  );
});

t.test('parseRequest merges turns so the IR alternates', async (t) => {
  const ir = openai.parseRequest({
    model: 'm',
    messages: [
      { role: 'user', content: 'a' },
      { role: 'user', content: [{ type: 'text', text: 'b' }] },
      { role: 'assistant', content: 'c' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'assistant', content: null },
      { role: 'system', content: 'late system' },
      { role: 'user', content: 'before result' },
      { role: 'tool', tool_call_id: 'x', content: 'r' },
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }], refusal: 'Sorry.' },
      { role: 'assistant', function_call: { name: 'legacy', arguments: '{"a":1}' } },
      { role: 'function', name: 'legacy', content: 'done' },
    ],
  });
  t.strictSame(ir.system, ['late system']);
  t.strictSame(
    ir.messages.map((m) => m.role),
    ['user', 'assistant', 'user', 'assistant', 'user'],
  );
  t.strictSame(ir.messages[0]!.content, [
    { type: 'text', text: 'a' },
    { type: 'text', text: 'b' },
  ]);
  t.strictSame(ir.messages[1]!.content, [
    { type: 'text', text: 'c' },
    { type: 'tool_use', id: 'x', name: 'f', input: {} },
  ]);
  t.strictSame(
    ir.messages[2]!.content,
    [
      { type: 'tool_result', toolUseId: 'x', content: 'r' },
      { type: 'text', text: 'before result' },
    ],
    'tool results lead their user turn',
  );
  t.strictSame(ir.messages[3]!.content, [
    { type: 'text', text: 'No.' },
    { type: 'text', text: 'Sorry.' },
    { type: 'tool_use', id: 'legacy', name: 'legacy', input: { a: 1 } },
  ]);
  t.strictSame(ir.messages[4]!.content, [{ type: 'tool_result', toolUseId: 'legacy', content: 'done' }]);
});

t.test('parseRequest validation names the field at fault', async (t) => {
  const withMsg = (m: unknown, extra: Record<string, unknown> = {}) => ({
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }, m],
    ...extra,
  });
  const cases: Array<[string, unknown, string | undefined]> = [
    ['array body', [], undefined],
    ['null body', null, undefined],
    ['string body', 'hello', undefined],
    ['missing model', { messages: [{ role: 'user', content: 'x' }] }, 'model'],
    ['empty model', { ...baseBody(), model: '' }, 'model'],
    ['numeric model', { ...baseBody(), model: 4 }, 'model'],
    ['missing messages', { model: 'm' }, 'messages'],
    ['empty messages', { model: 'm', messages: [] }, 'messages'],
    ['messages not array', { model: 'm', messages: 'hi' }, 'messages'],
    ['bad role', withMsg({ role: 'bot', content: 'x' }), 'messages[1].role'],
    ['missing role', withMsg({ content: 'x' }), 'messages[1].role'],
    // The keyed lookup of the role must not find what every object has.
    ['role named like a prototype key', withMsg({ role: 'constructor', content: 'x' }), 'messages[1].role'],
    ['role number', withMsg({ role: 5, content: 'x' }), 'messages[1].role'],
    [
      'assistant image part',
      withMsg({ role: 'assistant', content: [{ type: 'image_url', image_url: { url: 'https://x' } }] }),
      'messages[1].content[0].type',
    ],
    ['message not object', withMsg(5), 'messages[1]'],
    ['user without content', withMsg({ role: 'user' }), 'messages[1].content'],
    ['user content number', withMsg({ role: 'user', content: 5 }), 'messages[1].content'],
    ['user content empty array', withMsg({ role: 'user', content: [] }), 'messages[1].content'],
    ['bad part type', withMsg({ role: 'user', content: [{ type: 'video' }] }), 'messages[1].content[0].type'],
    [
      'text part not string',
      withMsg({ role: 'user', content: [{ type: 'text', text: 3 }] }),
      'messages[1].content[0].text',
    ],
    [
      'image without url',
      withMsg({ role: 'user', content: [{ type: 'image_url', image_url: {} }] }),
      'messages[1].content[0].image_url.url',
    ],
    [
      'image ftp url',
      withMsg({
        role: 'user',
        content: [
          { type: 'text', text: 'x' },
          { type: 'image_url', image_url: { url: 'ftp://x/y.png' } },
        ],
      }),
      'messages[1].content[1].image_url.url',
    ],
    [
      'system image part',
      withMsg({ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x' } }] }),
      'messages[1].content[0].type',
    ],
    ['tool without id', withMsg({ role: 'tool', content: 'r' }), 'messages[1].tool_call_id'],
    [
      'tool call without name',
      withMsg({ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { arguments: '{}' } }] }),
      'messages[1].tool_calls[0].function.name',
    ],
    [
      'tool call args not string',
      withMsg({
        role: 'assistant',
        tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: {} } }],
      }),
      'messages[1].tool_calls[0].function.arguments',
    ],
    ['assistant content number', withMsg({ role: 'assistant', content: 7 }), 'messages[1].content'],
    ['function without name', withMsg({ role: 'function', content: 'x' }), 'messages[1].name'],
    ['stream string', { ...baseBody(), stream: 'yes' }, 'stream'],
    ['max_tokens zero', { ...baseBody(), max_tokens: 0 }, 'max_tokens'],
    ['max_tokens fraction', { ...baseBody(), max_tokens: 1.5 }, 'max_tokens'],
    ['max_tokens string', { ...baseBody(), max_tokens: '10' }, 'max_tokens'],
    ['max_completion_tokens negative', { ...baseBody(), max_completion_tokens: -1 }, 'max_completion_tokens'],
    ['temperature high', { ...baseBody(), temperature: 2.5 }, 'temperature'],
    ['temperature negative', { ...baseBody(), temperature: -0.1 }, 'temperature'],
    ['top_p high', { ...baseBody(), top_p: 1.1 }, 'top_p'],
    ['stop too many', { ...baseBody(), stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    ['stop number', { ...baseBody(), stop: 5 }, 'stop'],
    ['stop item number', { ...baseBody(), stop: ['a', 1] }, 'stop[1]'],
    ['tools not array', { ...baseBody(), tools: {} }, 'tools'],
    ['tool bad type', { ...baseBody(), tools: [{ type: 'web', function: { name: 'f' } }] }, 'tools[0].type'],
    ['tool without name', { ...baseBody(), tools: [{ type: 'function', function: {} }] }, 'tools[0].function.name'],
    [
      'tool params not object',
      { ...baseBody(), tools: [{ type: 'function', function: { name: 'f', parameters: 'x' } }] },
      'tools[0].function.parameters',
    ],
    ['tool_choice unknown', { ...baseBody(), tool_choice: 'any' }, 'tool_choice'],
    [
      'tool_choice without name',
      { ...baseBody(), tool_choice: { type: 'function', function: {} } },
      'tool_choice.function.name',
    ],
    [
      'tool_choice bad type',
      { ...baseBody(), tool_choice: { type: 'tool', function: { name: 'f' } } },
      'tool_choice.type',
    ],
    ['parallel_tool_calls string', { ...baseBody(), parallel_tool_calls: 'true' }, 'parallel_tool_calls'],
    ['stream_options not object', { ...baseBody(), stream_options: true }, 'stream_options'],
    [
      'include_usage string',
      { ...baseBody(), stream_options: { include_usage: 'yes' } },
      'stream_options.include_usage',
    ],
    ['user number', { ...baseBody(), user: 5 }, 'user'],
  ];
  for (const [label, body, param] of cases) expectInvalid(t, body, param, label);

  // t.throws, not a try/catch: a parser that stopped throwing must fail here, not pass unasserted.
  t.throws(
    () => openai.parseRequest(withMsg({ role: 'bot', content: 'x' })),
    {
      kind: 'invalid_request',
      status: 400,
      param: 'messages[1].role',
      message: /'system', 'developer', 'user', 'assistant', 'tool', 'function' \(got "bot"\)/,
    },
    'a bad role is refused, naming the field and the allowed roles',
  );
  t.throws(
    () => openai.parseRequest({ messages: [] }),
    { kind: 'invalid_request', status: 400, param: 'model', message: "Missing required parameter: 'model'." },
    'a missing model is refused, naming it',
  );
});

t.test('decodeStream reads every recorded OpenAI stream', async (t) => {
  t.ok(sseFixtures.length >= 6, 'fixtures found');
  for (const file of sseFixtures) {
    const events = await decode(readFileSync(path.join(fixtures, file)));
    const ref = reference(file);
    const got = summarize(events);
    t.equal(events[0]!.type, 'start', `${file}: start first`);
    t.equal(events.at(-1)!.type, 'end', `${file}: end last`);
    t.equal(events.at(-2)!.type, 'stop', `${file}: stop before end`);
    t.equal(events.filter((e) => e.type === 'start').length, 1, `${file}: one start`);
    const start = events[0] as Extract<IRStreamEvent, { type: 'start' }>;
    t.match(start.id, /^chatcmpl-/, `${file}: start carries the completion id`);
    t.not(start.model, '', `${file}: start carries the model`);
    t.equal(got.text, ref.text, `${file}: text`);
    t.strictSame(got.tools, ref.tools, `${file}: tool calls`);
    const prompt = ref.usage.prompt_tokens as number;
    const cached = (ref.usage.prompt_tokens_details?.cached_tokens ?? 0) as number;
    t.strictSame(
      got.usage,
      { input: prompt - cached, output: ref.usage.completion_tokens, cacheRead: cached, cacheWrite: 0 },
      `${file}: usage`,
    );
    const expectedStop: Record<string, IRStopReason> = {
      stop: 'end_turn',
      tool_calls: 'tool_use',
      length: 'max_tokens',
    };
    t.equal(got.stopReason, expectedStop[ref.finish], `${file}: stop reason`);

    // Blocks: indices 0..n-1 in order, each opened once and closed before stop.
    const starts = events.filter((e) => e.type === 'block_start').map((e) => (e as { index: number }).index);
    const stops = events.filter((e) => e.type === 'block_stop').map((e) => (e as { index: number }).index);
    t.strictSame(
      starts,
      starts.map((_, i) => i),
      `${file}: block indices are positions`,
    );
    t.strictSame(stops, starts, `${file}: every block closed in order`);
    const stopAt = events.findIndex((e) => e.type === 'stop');
    t.ok(
      events.slice(stopAt).every((e) => e.type === 'stop' || e.type === 'end'),
      `${file}: nothing after stop but end`,
    );
    t.notOk(
      events.some((e) => e.type === 'delta' && e.delta.type === 'text' && e.delta.text === ''),
      `${file}: no empty text deltas`,
    );
  }
});

t.test('decodeStream: hand-checked facts from specific recordings', async (t) => {
  const read = async (f: string) => summarize(await decode(readFileSync(path.join(fixtures, f))));
  const refusal = await read('stream_refusal.sse');
  t.equal(refusal.text, "I'm sorry, I can't assist with that request.");
  t.strictSame(refusal.usage, { input: 79, output: 11, cacheRead: 0, cacheWrite: 0 });

  const parallel = await read('stream_parallel_tool_calls_include_usage.sse');
  t.strictSame(
    parallel.tools.map((c) => c.name),
    ['GetWeatherArgs', 'get_stock_price'],
  );
  t.equal(parallel.tools[0]!.id, 'call_JMW1whyEaYG438VE1OIflxA2');
  t.strictSame(JSON.parse(parallel.tools[0]!.arguments), { city: 'Edinburgh', country: 'GB', units: 'c' });
  t.strictSame(JSON.parse(parallel.tools[1]!.arguments), { ticker: 'AAPL', exchange: 'NASDAQ' });
  t.equal(parallel.text, '');
  t.equal(parallel.stopReason, 'tool_use');

  const roleChunk = await read('stream_tool_call_in_role_chunk.sse');
  t.strictSame(roleChunk.tools, [
    { id: 'call_4XzlGBLtUe9dy3GVNV4jhq7h', name: 'get_weather', arguments: '{"city":"New York City"}' },
  ]);

  const azure = await decode(readFileSync(path.join(fixtures, 'stream_azure_prompt_filter_first_chunk.sse')));
  t.strictSame(
    azure[0],
    { type: 'start', id: 'chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt', model: 'gpt-5-nano-2025-08-07' },
    'the empty Azure chunk does not start the answer',
  );
  t.equal(summarize(azure).text, 'Capital of Denmark.');
  t.strictSame(summarize(azure).usage, { input: 15, output: 78, cacheRead: 0, cacheWrite: 0 });

  const obf = await read('stream_text_usage_null_obfuscation.sse');
  t.strictSame(
    obf.usage,
    { input: 16, output: 300, cacheRead: 0, cacheWrite: 0 },
    'usage:null chunks are not the usage chunk',
  );
  t.match(obf.text, /^\*\*Holiday Name:\*\* Harmony Day\n\n/);
});

const sse = (...chunks: unknown[]) =>
  Buffer.from(chunks.map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`).join(''));
const ch = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  id: 'c1',
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});

t.test('decodeStream: reasoning, block switching and edge cases', async (t) => {
  const events = await decode(
    sse(
      ch({ role: 'assistant', content: '' }),
      ch({ reasoning_content: 'think' }),
      ch({ reasoning_content: 'ing' }),
      ch({ content: 'Hello' }),
      ch({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' } }] }),
      ch({ tool_calls: [{ index: 0, function: { arguments: '{"x":1}' } }] }),
      ch({}, 'tool_calls'),
      {
        id: 'c1',
        choices: [],
        usage: { prompt_tokens: 100, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 60 } },
      },
      '[DONE]',
    ),
  );
  t.strictSame(events, [
    { type: 'start', id: 'c1', model: 'm' },
    { type: 'block_start', index: 0, block: { type: 'thinking' } },
    { type: 'delta', index: 0, delta: { type: 'thinking', thinking: 'think' } },
    { type: 'delta', index: 0, delta: { type: 'thinking', thinking: 'ing' } },
    { type: 'block_stop', index: 0 },
    { type: 'block_start', index: 1, block: { type: 'text' } },
    { type: 'delta', index: 1, delta: { type: 'text', text: 'Hello' } },
    { type: 'block_stop', index: 1 },
    { type: 'block_start', index: 2, block: { type: 'tool_use', id: 'a', name: 'f' } },
    { type: 'delta', index: 2, delta: { type: 'input_json', partialJson: '{"x":1}' } },
    { type: 'block_stop', index: 2 },
    { type: 'stop', stopReason: 'tool_use', usage: { input: 40, output: 5, cacheRead: 60, cacheWrite: 0 } },
    { type: 'end' },
  ]);

  const noUsage = await decode(sse(ch({ content: 'x' }), ch({}, 'length'), '[DONE]'));
  t.strictSame(
    noUsage.slice(-2),
    [{ type: 'stop', stopReason: 'max_tokens' }, { type: 'end' }],
    'stop without usage at [DONE]',
  );

  const noDone = await decode(sse(ch({ content: 'x' }), ch({}, 'stop')));
  t.strictSame(
    noDone.slice(-2),
    [{ type: 'stop', stopReason: 'end_turn' }, { type: 'end' }],
    'a finished stream without [DONE] still ends',
  );

  const cut = await decode(sse(ch({ content: 'x' })));
  t.equal(cut.at(-1)!.type, 'error', 'a stream cut before finishing is an error');
  t.notOk(cut.some((e) => e.type === 'end'));

  const overloaded = await decode(
    sse(
      ch({ content: 'x' }),
      { error: { message: 'Server is overloaded', type: 'server_error', code: 'overloaded' } },
      ch({ content: 'y' }),
    ),
  );
  t.strictSame(overloaded.at(-1), { type: 'error', kind: 'overloaded', message: 'Server is overloaded' });
  t.notOk(
    overloaded.some((e) => e.type === 'delta' && e.delta.type === 'text' && e.delta.text === 'y'),
    'nothing after the error',
  );

  const failed = await decode(sse(ch({ content: 'x' }), { error: { message: 'boom', type: 'server_error' } }));
  t.strictSame(failed.at(-1), { type: 'error', kind: 'upstream', message: 'boom' });

  const garbage = await decode(sse(ch({ content: 'x' }), '{not json', '[DONE]'));
  t.equal(garbage.at(-1)!.type, 'error');
  t.equal((garbage.at(-1) as { kind: string }).kind, 'upstream');

  // A vendor that numbers every call 0 but gives each its own id.
  const zeroIndexed = summarize(
    await decode(
      sse(
        ch({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{}' } }] }),
        ch({ tool_calls: [{ index: 0, id: 'b', function: { name: 'g', arguments: '{"y":2}' } }] }),
        ch({}, 'tool_calls'),
        '[DONE]',
      ),
    ),
  );
  t.strictSame(zeroIndexed.tools, [
    { id: 'a', name: 'f', arguments: '{}' },
    { id: 'b', name: 'g', arguments: '{"y":2}' },
  ]);

  // Running usage before the finish chunk must not end the answer early.
  const running = await decode(
    sse(
      ch({ content: 'a' }, null, { usage: { prompt_tokens: 3, completion_tokens: 1 } }),
      ch({ content: 'b' }, null, { usage: { prompt_tokens: 3, completion_tokens: 2 } }),
      ch({}, 'stop'),
      '[DONE]',
    ),
  );
  t.equal(summarize(running).text, 'ab');
  t.strictSame(summarize(running).usage, { input: 3, output: 2, cacheRead: 0, cacheWrite: 0 });
});

/** Parse the encoder's output back into chunk objects. */
function chunksOf(bytes: Buffer): Array<Record<string, any> | '[DONE]'> {
  return bytes
    .toString('utf8')
    .split('\n\n')
    .filter((s) => s !== '')
    .map((s) => {
      if (!s.startsWith('data: ')) throw new Error(`not a data event: ${s}`);
      const data = s.slice(6);
      return data === '[DONE]' ? '[DONE]' : JSON.parse(data);
    });
}

t.test('encodeStream round-trips every recorded stream', async (t) => {
  for (const file of sseFixtures) {
    const events = await decode(readFileSync(path.join(fixtures, file)));
    const bytes = await encode(events, ctx(true));
    t.ok(bytes.toString().endsWith('data: [DONE]\n\n'), `${file}: ends with [DONE]`);
    const again = await decode(bytes);
    const a = summarize(events);
    const b = summarize(again);
    t.equal(b.text, a.text, `${file}: text survives`);
    t.strictSame(b.tools, a.tools, `${file}: tool calls survive`);
    t.strictSame(b.usage, a.usage, `${file}: usage survives`);
    t.equal(b.stopReason, a.stopReason, `${file}: stop reason survives`);
    const chunks = chunksOf(bytes).filter((c): c is Record<string, any> => c !== '[DONE]');
    for (const c of chunks) {
      t.equal(c.id, 'chatcmpl-test');
      t.equal(c.object, 'chat.completion.chunk');
      t.equal(c.created, 1700000000);
      t.equal(c.model, 'my-model');
      if (c.choices.length > 0) t.equal(c.choices[0].index, 0);
    }
    t.strictSame(chunks[0]!.choices[0].delta, { role: 'assistant', content: '' }, `${file}: role chunk first`);
  }
});

const anthropicLike = (): IRStreamEvent[] => [
  { type: 'start', id: 'msg_1', model: 'claude', usage: { input: 10, output: 1, cacheRead: 5, cacheWrite: 7 } },
  { type: 'ping' },
  { type: 'block_start', index: 0, block: { type: 'thinking' } },
  { type: 'delta', index: 0, delta: { type: 'thinking', thinking: 'hmm' } },
  { type: 'delta', index: 0, delta: { type: 'signature', signature: 'sig' } },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 1, block: { type: 'text' } },
  { type: 'delta', index: 1, delta: { type: 'text', text: 'Let me check.' } },
  { type: 'block_stop', index: 1 },
  { type: 'block_start', index: 2, block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather' } },
  { type: 'delta', index: 2, delta: { type: 'input_json', partialJson: '' } },
  { type: 'delta', index: 2, delta: { type: 'input_json', partialJson: '{"city":' } },
  { type: 'delta', index: 2, delta: { type: 'input_json', partialJson: '"Oslo"}' } },
  { type: 'block_stop', index: 2 },
  { type: 'block_start', index: 3, block: { type: 'tool_use', id: 'toolu_2', name: 'get_time' } },
  { type: 'delta', index: 3, delta: { type: 'input_json', partialJson: '{}' } },
  { type: 'block_stop', index: 3 },
  { type: 'stop', stopReason: 'tool_use', usage: { output: 42, cacheRead: 6 } },
  { type: 'end' },
];

t.test('encodeStream renumbers tool calls, maps reasoning and accumulates usage', async (t) => {
  const chunks = chunksOf(await encode(anthropicLike(), ctx(true)));
  const deltas = chunks
    .filter((c): c is Record<string, any> => c !== '[DONE]' && c.choices.length > 0)
    .map((c) => c.choices[0].delta);
  t.strictSame(deltas, [
    { role: 'assistant', content: '' },
    { reasoning_content: 'hmm' },
    { content: 'Let me check.' },
    { tool_calls: [{ index: 0, id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
    { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
    { tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] },
    { tool_calls: [{ index: 1, id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '' } }] },
    { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
    {},
  ]);
  const finish = chunks.at(-3) as Record<string, any>;
  t.equal(finish.choices[0].finish_reason, 'tool_calls');
  const usage = chunks.at(-2) as Record<string, any>;
  t.strictSame(usage.choices, []);
  // input 10, cacheRead overridden to 6 by stop, cacheWrite 7 from start, output 42.
  t.strictSame(usage.usage, {
    prompt_tokens: 23,
    completion_tokens: 42,
    total_tokens: 65,
    cached_tokens: 6,
    prompt_tokens_details: { cached_tokens: 6 },
  });
  t.equal(chunks.at(-1), '[DONE]');
  t.ok(
    chunks.slice(0, -2).every((c) => c !== '[DONE]' && c.usage === null),
    'with include_usage, other chunks say usage: null',
  );
});

t.test('encodeStream omits the usage chunk unless the client asked', async (t) => {
  const text = (await encode(anthropicLike(), ctx(false))).toString();
  const chunks = chunksOf(Buffer.from(text));
  t.equal(chunks.at(-1), '[DONE]');
  t.notOk(text.includes('"usage"'), 'no usage anywhere');
  t.notOk(
    chunks.some((c) => c !== '[DONE]' && c.choices.length === 0),
    'no choices:[] chunk',
  );
  t.equal((chunks.at(-2) as Record<string, any>).choices[0].finish_reason, 'tool_calls');
});

t.test('encodeStream maps every stop reason', async (t) => {
  const map: Array<[IRStopReason | null, string]> = [
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    [null, 'stop'],
  ];
  for (const [reason, finish] of map) {
    const chunks = chunksOf(
      await encode(
        [{ type: 'start', id: 'x', model: 'm' }, { type: 'stop', stopReason: reason }, { type: 'end' }],
        ctx(false),
      ),
    );
    t.equal((chunks.at(-2) as Record<string, any>).choices[0].finish_reason, finish, `${reason} → ${finish}`);
  }
});

t.test('encodeStream ends with the error event, and no [DONE]', async (t) => {
  const text = (
    await encode(
      [
        { type: 'start', id: 'x', model: 'm' },
        { type: 'block_start', index: 0, block: { type: 'text' } },
        { type: 'delta', index: 0, delta: { type: 'text', text: 'par' } },
        { type: 'error', kind: 'overloaded', message: 'Overloaded' },
        { type: 'delta', index: 0, delta: { type: 'text', text: 'after' } },
        { type: 'end' },
      ],
      ctx(true),
    )
  ).toString();
  t.ok(text.endsWith('data: {"error":{"message":"Overloaded","type":"overloaded","param":null,"code":null}}\n\n'));
  t.notOk(text.includes('[DONE]'));
  t.notOk(text.includes('after'));
});

t.test('parseResponse reads every recorded completion', async (t) => {
  t.ok(jsonFixtures.length >= 5);
  for (const file of jsonFixtures) {
    const body = JSON.parse(readFileSync(path.join(fixtures, file), 'utf8'));
    const ir = openai.parseResponse(body);
    const msg = body.choices[0].message;
    t.equal(ir.id, body.id, `${file}: id`);
    t.equal(ir.model, body.model, `${file}: model`);
    const text = ir.content
      .filter((c) => c.type === 'text')
      .map((c) => (c as { text: string }).text)
      .join('');
    t.equal(text, msg.content ?? '', `${file}: text`);
    const calls = ir.content.filter((c) => c.type === 'tool_use');
    t.strictSame(
      calls,
      (msg.tool_calls ?? []).map((c: any) => ({
        type: 'tool_use',
        id: c.id,
        name: c.function.name,
        input: JSON.parse(c.function.arguments),
      })),
      `${file}: tool calls`,
    );
    const cached = body.usage.prompt_tokens_details?.cached_tokens ?? 0;
    t.strictSame(
      ir.usage,
      {
        input: body.usage.prompt_tokens - cached,
        output: body.usage.completion_tokens,
        cacheRead: cached,
        cacheWrite: 0,
      },
      `${file}: usage`,
    );
  }
  const read = (f: string) => openai.parseResponse(JSON.parse(readFileSync(path.join(fixtures, f), 'utf8')));
  t.equal(read('chat_completion_finish_length.json').stopReason, 'max_tokens');
  t.equal(read('chat_completion_parallel_tool_calls.json').stopReason, 'tool_use');
  t.equal(read('chat_completion_parallel_tool_calls.json').content.length, 2, 'null content gives no text block');
  t.equal(read('chat_completion_text.json').stopReason, 'end_turn');
  t.strictSame(read('chat_completion_cached_tokens.json').usage, {
    input: 138,
    output: 1,
    cacheRead: 9984,
    cacheWrite: 0,
  });
  t.match(
    (read('chat_completion_n3_multiple_choices.json').content[0] as { text: string }).text,
    '"temperature":64,',
    'the first choice is the answer',
  );
});

t.test('parseResponse: reasoning, refusal, broken arguments, malformed bodies', async (t) => {
  const ir = openai.parseResponse({
    id: 'x',
    model: 'deepseek-reasoner',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          reasoning_content: 'Let me think.',
          content: 'Answer',
          refusal: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a": tru' } }],
        },
        finish_reason: 'length',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 4, prompt_cache_hit_tokens: 8 },
  });
  t.strictSame(ir.content, [
    { type: 'thinking', thinking: 'Let me think.' },
    { type: 'text', text: 'Answer' },
    { type: 'tool_use', id: 'c', name: 'f', input: { [RAW_ARGUMENTS_KEY]: '{"a": tru' } },
  ]);
  t.strictSame(ir.usage, { input: 2, output: 4, cacheRead: 8, cacheWrite: 0 }, "DeepSeek's cache hits count as cached");
  const refusal = openai.parseResponse({
    id: 'r',
    model: 'm',
    choices: [{ index: 0, message: { content: null, refusal: 'No.' }, finish_reason: 'content_filter' }],
  });
  t.strictSame(refusal.content, [{ type: 'text', text: 'No.' }]);
  t.equal(refusal.stopReason, 'refusal');
  t.strictSame(refusal.usage, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
  for (const bad of [null, {}, { choices: [] }, { choices: [{ index: 0 }] }]) {
    t.throws(
      () => openai.parseResponse(bad),
      new GatewayError('upstream', 'The upstream returned a malformed chat completion.'),
    );
  }
});

t.test('renderResponse builds a chat.completion', async (t) => {
  const res: IRResponse = {
    id: 'msg_1',
    model: 'claude',
    content: [
      { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
      { type: 'text', text: 'Sure, ' },
      { type: 'text', text: 'checking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
      { type: 'tool_use', id: 'toolu_2', name: 'broken', input: { [RAW_ARGUMENTS_KEY]: '{"a":' } },
    ],
    stopReason: 'tool_use',
    usage: { input: 100, output: 20, cacheRead: 50, cacheWrite: 10 },
  };
  const body = openai.renderResponse(res, ctx(false)) as Record<string, any>;
  t.strictSame(body, {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1700000000,
    model: 'my-model',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Sure, checking.',
          refusal: null,
          reasoning_content: 'Hmm.',
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'broken', arguments: '{"a":' } },
          ],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ],
    usage: {
      prompt_tokens: 160,
      completion_tokens: 20,
      total_tokens: 180,
      cached_tokens: 50,
      prompt_tokens_details: { cached_tokens: 50 },
    },
  });
  const toolsOnly = openai.renderResponse(
    { ...res, content: [res.content[3]!], stopReason: 'max_tokens' },
    ctx(false),
  ) as Record<string, any>;
  t.equal(toolsOnly.choices[0].message.content, null, 'content is null when only tool calls');
  t.notOk('reasoning_content' in toolsOnly.choices[0].message);
  t.equal(toolsOnly.choices[0].finish_reason, 'length');
  const plain = openai.renderResponse(
    { ...res, content: [{ type: 'text', text: 'Hi' }], stopReason: 'refusal' },
    ctx(false),
  ) as Record<string, any>;
  t.notOk('tool_calls' in plain.choices[0].message);
  t.equal(plain.choices[0].message.content, 'Hi');
  t.equal(plain.choices[0].finish_reason, 'content_filter');
});

t.test('errorResponse follows the API.md table', async (t) => {
  const table: Array<[ErrorKind, number, string, string | null]> = [
    ['invalid_request', 400, 'invalid_request_error', null],
    ['authentication', 401, 'authentication_error', 'invalid_api_key'],
    ['insufficient_balance', 402, 'insufficient_quota', 'insufficient_balance'],
    ['permission', 403, 'permission_error', null],
    ['not_found', 404, 'invalid_request_error', 'model_not_found'],
    ['too_large', 413, 'invalid_request_error', 'request_too_large'],
    ['rate_limit', 429, 'rate_limit_error', 'rate_limit_exceeded'],
    ['upstream', 502, 'upstream_error', null],
    ['overloaded', 503, 'overloaded', null],
    ['timeout', 504, 'timeout', null],
    ['unavailable', 503, 'service_unavailable', null],
  ];
  for (const [kind, status, type, code] of table) {
    const { status: s, body } = openai.errorResponse(new GatewayError(kind, `msg ${kind}`), 'req_1');
    t.equal(s, status, `${kind} status`);
    t.strictSame(body, { error: { message: `msg ${kind}`, type, param: null, code } }, `${kind} body`);
  }
  const withParam = openai.errorResponse(
    new GatewayError('invalid_request', 'bad', { param: 'messages[0].role', code: 'invalid_value' }),
    'r',
  );
  t.strictSame(withParam.body, {
    error: { message: 'bad', type: 'invalid_request_error', param: 'messages[0].role', code: 'invalid_value' },
  });
  const override = openai.errorResponse(new GatewayError('not_found', 'gone', { code: 'model_retired' }), 'r');
  t.equal((override.body as any).error.code, 'model_retired', 'err.code overrides the default');
  t.equal(
    openai.errorEvent(new GatewayError('timeout', 'slow'), 'r').toString(),
    'data: {"error":{"message":"slow","type":"timeout","param":null,"code":null}}\n\n',
  );
});

t.test('upstreamErrorMessage reads recorded OpenAI error bodies', async (t) => {
  const dir = path.join(fixtures, 'errors');
  const index = JSON.parse(readFileSync(path.join(dir, 'index.json'), 'utf8')) as Array<{ file: string }>;
  t.ok(index.length >= 5);
  for (const { file } of index) {
    const text = readFileSync(path.join(dir, file), 'utf8');
    const body = JSON.parse(text);
    t.equal(openai.upstreamErrorMessage(body), body.error.message, file);
    t.equal(openai.upstreamErrorMessage(text), body.error.message, `${file} as text`);
  }
  t.equal(openai.upstreamErrorMessage({ error: 'plain' }), 'plain');
  t.equal(openai.upstreamErrorMessage({ message: 'not openai' }), undefined);
  t.equal(openai.upstreamErrorMessage('<html>502</html>'), undefined);
  t.equal(openai.upstreamErrorMessage(null), undefined);
});

t.test('buildRequest turns the IR into an upstream body', async (t) => {
  const body = openai.buildRequest(
    {
      model: 'claude-sonnet-4',
      system: ['Be brief.', 'Use tools.'],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look' },
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAA=' } },
            { type: 'image', source: { kind: 'url', url: 'https://x/y.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'secret', signature: 's' },
            { type: 'redacted_thinking', data: 'zzz' },
            { type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } },
            { type: 'tool_use', id: 't2', name: 'g', input: { [RAW_ARGUMENTS_KEY]: '{"b":' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'and then' },
            { type: 'tool_result', toolUseId: 't1', content: 'one' },
            {
              type: 'tool_result',
              toolUseId: 't2',
              content: [
                { type: 'text', text: 'two' },
                { type: 'text', text: 'lines' },
              ],
              isError: true,
            },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'Done' }] },
      ],
      tools: [
        { name: 'f', description: 'F', parameters: { type: 'object' } },
        { name: 'g', parameters: { type: 'object' } },
      ],
      toolChoice: { type: 'tool', name: 'f' },
      parallelToolCalls: true,
      maxTokens: 256,
      temperature: 0.3,
      topP: 0.8,
      stop: ['X'],
      stream: true,
      includeUsage: false,
      user: 'u1',
    },
    'gpt-4o-mini',
  );
  t.strictSame(body, {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Use tools.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAA=' } },
          { type: 'image_url', image_url: { url: 'https://x/y.jpg' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
          { id: 't2', type: 'function', function: { name: 'g', arguments: '{"b":' } },
        ],
      },
      { role: 'tool', tool_call_id: 't1', content: 'one' },
      { role: 'tool', tool_call_id: 't2', content: 'two\nlines' },
      { role: 'user', content: 'and then' },
      { role: 'assistant', content: 'Done' },
    ],
    tools: [
      { type: 'function', function: { name: 'f', description: 'F', parameters: { type: 'object' } } },
      { type: 'function', function: { name: 'g', parameters: { type: 'object' } } },
    ],
    parallel_tool_calls: true,
    tool_choice: { type: 'function', function: { name: 'f' } },
    max_tokens: 256,
    temperature: 0.3,
    top_p: 0.8,
    stop: ['X'],
    stream: true,
    stream_options: { include_usage: true },
    user: 'u1',
  });

  const minimal = {
    model: 'x',
    system: [],
    messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }],
    stream: false,
    includeUsage: false,
  };
  const plain = openai.buildRequest(
    { ...minimal, parallelToolCalls: false, maxTokens: 10, toolChoice: { type: 'none' } },
    'o3-mini',
  );
  t.equal(plain.max_completion_tokens, 10, 'reasoning models get max_completion_tokens');
  t.notOk('max_tokens' in plain);
  t.notOk('parallel_tool_calls' in plain, 'no parallel_tool_calls without tools');
  t.notOk('stream_options' in plain, 'no stream_options when not streaming');
  t.equal(plain.stream, false);
  t.equal(plain.tool_choice, 'none');
  t.strictSame(plain.messages, [{ role: 'user', content: 'hi' }]);
  t.equal(openai.buildRequest({ ...minimal, maxTokens: 5 }, 'gpt-5-mini').max_completion_tokens, 5);
  t.equal(openai.buildRequest({ ...minimal, maxTokens: 5 }, 'deepseek-chat').max_tokens, 5);
  t.notOk('reasoning_effort' in plain);
  t.equal(openai.buildRequest({ ...minimal, reasoningEffort: 'high' }, 'o3-mini').reasoning_effort, 'high');
  // A mid-conversation system message (Anthropic client) stays at its place; an empty one is left out.
  const placed = openai.buildRequest(
    {
      ...minimal,
      system: ['S'],
      messages: [
        minimal.messages[0]!,
        {
          role: 'system',
          content: [
            { type: 'text', text: 'Mid' },
            { type: 'text', text: 'dle' },
          ],
        },
        { role: 'system', content: [] },
        { role: 'assistant', content: [{ type: 'text', text: 'A' }] },
      ],
    },
    'gpt-4o',
  );
  t.strictSame(placed.messages, [
    { role: 'system', content: 'S' },
    { role: 'user', content: 'hi' },
    { role: 'system', content: 'Mid\ndle' },
    { role: 'assistant', content: 'A' },
  ]);
});

t.test('parseRequest reads reasoning_effort (known levels only)', async (t) => {
  for (const level of ['none', 'minimal', 'low', 'medium', 'high'] as const) {
    t.equal(openai.parseRequest({ ...baseBody(), reasoning_effort: level }).reasoningEffort, level);
  }
  t.equal(openai.parseRequest({ ...baseBody(), reasoning_effort: 'xhigh' }).reasoningEffort, undefined);
  t.equal(openai.parseRequest({ ...baseBody(), reasoning_effort: null }).reasoningEffort, undefined);
});

t.test('a chat request survives parseRequest → buildRequest', async (t) => {
  const original = {
    model: 'gpt-4o',
    messages: [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'Q' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'R' },
    ],
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }],
    tool_choice: 'auto',
    max_tokens: 9,
    stream: true,
  };
  const rebuilt = openai.buildRequest(openai.parseRequest(original), 'gpt-4o');
  t.strictSame(rebuilt.messages, original.messages, 'messages, invalid arguments included, come back unchanged');
  t.equal(rebuilt.tool_choice, 'auto');
  t.equal(rebuilt.max_tokens, 9);
});

function usageOf(u: Partial<IRUsage>): IRUsage {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...u };
}
t.test('non-stream response round trip through render and parse', async (t) => {
  const res: IRResponse = {
    id: 'a',
    model: 'b',
    content: [
      { type: 'text', text: 'x' },
      { type: 'tool_use', id: 'c', name: 'f', input: { q: [1, 2] } },
    ],
    stopReason: 'tool_use',
    usage: usageOf({ input: 7, output: 3, cacheRead: 2 }),
  };
  const back = openai.parseResponse(openai.renderResponse(res, ctx(false)));
  t.strictSame(back.content, res.content);
  t.equal(back.stopReason, 'tool_use');
  t.strictSame(back.usage, res.usage);
});
