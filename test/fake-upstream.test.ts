import t from 'tap';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import {
  countPromptTokens,
  FAKE_SIGNATURE,
  startFakeUpstream,
  TEXT_ANSWER,
  type FakeUpstream,
} from './fake-upstream/server.js';
import { FIXTURES_DIR } from './fixtures/index.js';

let up: FakeUpstream;
const fixturesDir = FIXTURES_DIR;

t.before(async () => {
  up = await startFakeUpstream({ fixturesDir });
});
t.teardown(() => up.close());
t.beforeEach(() => up.reset());

async function post(p: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(up.url + p, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

/** Data payloads of an SSE body, with their event names. */
function sse(text: string): { event?: string; data: string }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const ev: { event?: string; data: string } = { data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) ev.event = line.slice(7);
        else if (line.startsWith('data: ')) ev.data = line.slice(6);
      }
      return ev;
    });
}

const chatBody = (content: string, extra: object = {}) => ({
  model: 'gpt-fake',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content },
  ],
  ...extra,
});

t.test('openai text stream without include_usage has no usage chunk', async (t) => {
  const r = await post('/v1/chat/completions', chatBody('hi', { stream: true }));
  t.equal(r.status, 200);
  t.match(r.headers['content-type'], /^text\/event-stream/);
  const events = sse(r.text);
  t.equal(events.at(-1)!.data, '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
  for (const c of chunks) {
    t.match(c.id, /^chatcmpl-/);
    t.equal(c.object, 'chat.completion.chunk');
    t.equal(c.model, 'gpt-fake');
    t.equal(c.choices.length, 1, 'no usage chunk (choices: [])');
    t.notOk('usage' in c);
  }
  t.equal(chunks[0].choices[0].delta.role, 'assistant');
  t.equal(chunks.map((c) => c.choices[0].delta.content ?? '').join(''), TEXT_ANSWER);
  t.ok(chunks.length >= 5, 'several word deltas');
  const last = chunks.at(-1);
  t.same(last.choices[0].delta, {});
  t.equal(last.choices[0].finish_reason, 'stop');
});

t.test('openai text stream with include_usage ends with the usage chunk then [DONE]', async (t) => {
  const body = chatBody('Hello there, how are you?', { stream: true, stream_options: { include_usage: true } });
  const r = await post('/v1/chat/completions', body);
  const events = sse(r.text);
  t.equal(events.at(-1)!.data, '[DONE]');
  const usageChunk = JSON.parse(events.at(-2)!.data);
  t.same(usageChunk.choices, []);
  const prompt = Math.ceil(('Be brief.'.length + 'Hello there, how are you?'.length) / 4);
  t.equal(countPromptTokens(body, 'openai'), prompt);
  t.match(usageChunk.usage, {
    prompt_tokens: prompt,
    completion_tokens: 5,
    total_tokens: prompt + 5,
    prompt_tokens_details: { cached_tokens: 0 },
  });
  const finish = JSON.parse(events.at(-3)!.data);
  t.equal(finish.choices[0].finish_reason, 'stop');
  t.equal(finish.usage, null, 'other chunks carry usage: null');
});

t.test('openai non-stream, cached usage, and scenario picked from the model name', async (t) => {
  const r = await post('/v1/chat/completions', { ...chatBody('x'.repeat(400)), model: 'cached' });
  const c = JSON.parse(r.text);
  t.equal(c.object, 'chat.completion');
  t.equal(c.choices[0].message.content, TEXT_ANSWER);
  const prompt = Math.ceil((9 + 400) / 4);
  t.equal(c.usage.prompt_tokens, prompt);
  t.equal(c.usage.prompt_tokens_details.cached_tokens, Math.floor(prompt * 0.8));
});

t.test('anthropic tool stream: text at 0, tool_use at 1, real event order', async (t) => {
  const r = await post('/v1/messages', {
    model: 'claude-fake',
    max_tokens: 100,
    stream: true,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'weather? [[tools]]' }] }],
  });
  t.equal(r.status, 200);
  const events = sse(r.text);
  for (const e of events) t.equal(JSON.parse(e.data).type, e.event, 'data type matches event name');
  const kinds = events.map((e) => {
    const d = JSON.parse(e.data);
    return d.type === 'content_block_delta'
      ? `delta:${d.index}:${d.delta.type}`
      : d.index === undefined
        ? d.type
        : `${d.type}:${d.index}`;
  });
  const compact = kinds.filter((k, i) => k !== kinds[i - 1]);
  t.same(compact, [
    'message_start',
    'content_block_start:0',
    'ping',
    'delta:0:text_delta',
    'content_block_stop:0',
    'content_block_start:1',
    'delta:1:input_json_delta',
    'content_block_stop:1',
    'message_delta',
    'message_stop',
  ]);
  const data = events.map((e) => JSON.parse(e.data));
  const start = data.find((d) => d.type === 'content_block_start' && d.index === 1);
  t.match(start.content_block, { type: 'tool_use', name: 'get_weather', input: {} });
  t.match(start.content_block.id, /^toolu_/);
  const partials = data.filter((d) => d.delta?.type === 'input_json_delta').map((d) => d.delta.partial_json);
  t.equal(partials[0], '', 'first input_json_delta is empty');
  t.ok(partials.length >= 3, 'arguments come in several pieces');
  t.same(JSON.parse(partials.join('')), { city: 'Paris' });
  const delta = data.find((d) => d.type === 'message_delta');
  t.equal(delta.delta.stop_reason, 'tool_use');
  t.equal(
    delta.usage.output_tokens,
    data.filter((d) => d.type === 'content_block_delta' && !(d.delta.partial_json === '')).length,
  );
  t.equal(data[0].message.usage.output_tokens, 1);
});

t.test('anthropic thinking returns the fixed signature', async (t) => {
  const r = await post(
    '/v1/messages',
    { model: 'c', max_tokens: 9, messages: [{ role: 'user', content: 'x' }] },
    {
      'x-fake-scenario': 'thinking',
    },
  );
  const m = JSON.parse(r.text);
  t.match(m.content, [
    { type: 'thinking', signature: FAKE_SIGNATURE },
    { type: 'text', text: TEXT_ANSWER },
  ]);
});

t.test('error scenarios answer plain JSON in the dialect envelope, even for streams', async (t) => {
  const a = await post('/v1/messages', {
    model: 'c',
    stream: true,
    messages: [{ role: 'user', content: '[[error:429]]' }],
  });
  t.equal(a.status, 429);
  t.match(a.headers['content-type'], /^application\/json/);
  t.equal(a.headers['retry-after'], '1');
  t.equal(a.headers['x-should-retry'], 'true');
  t.match(JSON.parse(a.text), { type: 'error', error: { type: 'rate_limit_error' }, request_id: /^req_/ });

  const o = await post('/v1/chat/completions', chatBody('[[error:529]]'));
  t.equal(o.status, 529);

  const bad = await post('/v1/chat/completions', chatBody('hi'), { authorization: 'Bearer bad-key' });
  t.equal(bad.status, 401);
  t.match(JSON.parse(bad.text), { error: { code: 'invalid_api_key' } });

  const malformed = await post('/v1/messages', '{"model":');
  t.equal(malformed.status, 400);
  t.match(JSON.parse(malformed.text), { type: 'error', error: { type: 'invalid_request_error' } });
  t.equal(up.requests.at(-1)!.body, '{"model":', 'raw body recorded when not JSON');
});

t.test('replay sends an .sse fixture byte for byte', async (t) => {
  const rel = 'anthropic/stream_text_ping.sse';
  const r = await request(up.url + '/v1/chat/completions', {
    method: 'POST',
    headers: { 'x-fake-scenario': `replay:${rel}` },
    body: JSON.stringify(chatBody('x', { stream: true })),
  });
  t.equal(r.headers['content-type'], 'text/event-stream; charset=utf-8');
  const received: Buffer[] = [];
  for await (const chunk of r.body) received.push(chunk as Buffer);
  const expected = await readFile(path.join(fixturesDir, rel));
  t.ok(Buffer.concat(received).equals(expected), 'identical bytes');
  t.ok(received.length > 1, 'arrived in more than one chunk');

  const e = await post('/v1/messages', {
    messages: [{ role: 'user', content: '[[replay:anthropic/errors/500_api_error.json]]' }],
  });
  t.equal(e.status, 500);
  t.equal(e.text, await readFile(path.join(fixturesDir, 'anthropic/errors/500_api_error.json'), 'utf8'));
});

t.test('paced streams record stats; a stalled reader causes backpressure', async (t) => {
  const started = Date.now();
  const r = await post('/v1/chat/completions', chatBody('[[paced:5:20]]', { stream: true }));
  t.ok(Date.now() - started >= 90, 'five tokens 20 ms apart');
  const content = sse(r.text)
    .slice(0, -1)
    .map((e) => JSON.parse(e.data).choices[0].delta.content ?? '')
    .join('');
  t.equal(content, 'tok0 tok1 tok2 tok3 tok4 ');
  t.equal(up.streams.length, 1);
  t.match(up.streams[0], {
    id: Number,
    scenario: 'paced',
    bytesWritten: Buffer.byteLength(r.text),
    backpressureEvents: 0,
    pausedMs: 0,
    finished: true,
    aborted: false,
  });

  // 32 MB into a reader that does not read: socket buffers fill and the writer must wait.
  const slow = await request(up.url + '/v1/chat/completions', {
    method: 'POST',
    headers: { 'x-fake-scenario': 'long:32000' },
    body: JSON.stringify(chatBody('x', { stream: true })),
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const stats = up.streams[1]!;
  t.ok(stats.backpressureEvents >= 1, 'the stream hit backpressure');
  t.equal(stats.finished, false, 'and is still waiting for the reader');
  let bytes = 0;
  for await (const chunk of slow.body) bytes += (chunk as Buffer).length;
  t.equal(stats.finished, true);
  t.equal(bytes, stats.bytesWritten);
  t.ok(stats.pausedMs > 0);

  const viaHttp = await request(up.url + '/_streams');
  t.same(await viaHttp.body.json(), JSON.parse(JSON.stringify(up.streams)));
});

t.test('drop cuts the connection after K deltas', async (t) => {
  const res = await request(up.url + '/v1/chat/completions', {
    method: 'POST',
    body: JSON.stringify(chatBody('[[drop:2]]', { stream: true })),
  });
  t.equal(res.statusCode, 200);
  await t.rejects(res.body.text());
});

t.test('a client that goes away mid-stream marks it aborted', async (t) => {
  const ac = new AbortController();
  const res = await request(up.url + '/v1/messages', {
    method: 'POST',
    body: JSON.stringify({ model: 'c', stream: true, messages: [{ role: 'user', content: '[[paced:100:10]]' }] }),
    signal: ac.signal,
  });
  t.equal(res.statusCode, 200);
  for await (const chunk of res.body) {
    if (String(chunk).includes('text_delta')) break;
  }
  ac.abort();
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.match(up.streams[0], { scenario: 'paced', aborted: true, finished: false });
  const written = up.streams[0]!.bytesWritten;
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(up.streams[0]!.bytesWritten, written, 'nothing more is produced');
});

// ---- The Responses dialect: checked by the official SDK's own parsing, and by the event order
// of the recorded stream in test/fixtures/openai-responses/stream_text.sse.

t.test('responses: whole text answer, usage with both detail objects, as the openai SDK reads it', async (t) => {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  const r = await client.responses.create({ model: 'up-model', instructions: 'be brief', input: 'hello' });
  t.equal(r.object, 'response');
  t.equal(r.status, 'completed');
  t.match(r.id, /^resp_/);
  t.equal(r.output_text, TEXT_ANSWER, 'the SDK assembles the text');
  t.equal(r.usage?.input_tokens, countPromptTokens({ instructions: 'be brief', input: 'hello' }, 'responses'));
  t.same(r.usage?.output_tokens_details, { reasoning_tokens: 0 }, 'reasoning details present even when zero');
  t.same(r.usage?.input_tokens_details, { cached_tokens: 0 });
  t.equal(up.requests[0]!.path, '/v1/responses');
});

t.test('responses: a stream in the recorded order, usage only on the terminal event', async (t) => {
  const res = await post('/v1/responses', { model: 'm', input: 'hi', stream: true });
  const events = sse(res.text);
  const types = events.map((e) => e.event);
  t.same(types.slice(0, 4), [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
  ]);
  t.same(types.slice(-4), [
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ]);
  const payloads = events.map((e) => JSON.parse(e.data));
  t.ok(
    payloads.every((p, i) => p.type === types[i] && p.sequence_number === i),
    'type and sequence_number on every event',
  );
  t.ok(
    payloads.slice(0, -1).every((p) => p.response?.usage == null),
    'no usage before the end',
  );
  t.equal(
    payloads.at(-1).response.usage.output_tokens,
    payloads.filter((p) => p.type === 'response.output_text.delta').length,
  );
  t.notOk(res.text.includes('[DONE]'), 'no [DONE]');
});

t.test('responses: a tool round and a capped answer', async (t) => {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  const tools = [
    {
      type: 'function' as const,
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
      strict: false,
    },
  ];
  const first = await client.responses.create({ model: 'm', input: 'weather? [[tool_round]]', tools });
  const call = first.output.find((o) => o.type === 'function_call');
  t.equal(call?.type === 'function_call' && call.name, 'get_weather');
  t.same(call?.type === 'function_call' && JSON.parse(call.arguments), { city: 'Paris' });
  const second = await client.responses.create({
    model: 'm',
    tools,
    input: [
      { role: 'user', content: 'weather? [[tool_round]]' },
      call as any,
      { type: 'function_call_output', call_id: (call as any).call_id, output: '{"temp":21}' },
    ],
  });
  t.equal(second.output_text, TEXT_ANSWER, 'answers in words once the result is back');
  const capped = await client.responses.create({ model: 'm', input: '[[fill]]', max_output_tokens: 5 });
  t.equal(capped.status, 'incomplete');
  t.equal(capped.incomplete_details?.reason, 'max_output_tokens');
  t.equal(capped.usage?.output_tokens, 5, 'honours max_output_tokens');
});
