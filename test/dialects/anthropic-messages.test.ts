import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { from, lastValueFrom, toArray } from 'rxjs';
import Anthropic from '@anthropic-ai/sdk';
import { anthropic as dialect } from '../../src/dialects/anthropic/index.js';
import { GatewayError, type ErrorKind } from '../../src/errors.js';
import { parseSSE } from '../helpers/sse.js';
import type { IRRequest, IRResponse, IRStreamEvent, IRUsage } from '../../src/dialects/ir.js';
import type { RenderContext } from '../../src/dialects/dialect.js';
import { FIXTURES_DIR } from '../fixtures/index.js';

/** The `t` a subtest callback receives (the last overload of t.test takes only the callback). */
type Tap = Parameters<Parameters<typeof t.test>[0]>[0];

const fixtures = path.join(FIXTURES_DIR, 'anthropic');
const read = (rel: string) => readFileSync(path.join(fixtures, rel));
const readJSON = (rel: string): any => JSON.parse(read(rel).toString('utf8'));

const sseFixtures = [
  ...readdirSync(fixtures).filter((f) => f.endsWith('.sse')),
  ...readdirSync(path.join(fixtures, 'docs'))
    .filter((f) => f.endsWith('.sse'))
    .map((f) => `docs/${f}`),
];
const jsonFixtures = readdirSync(fixtures).filter((f) => f.endsWith('.json'));

const ctx: RenderContext = { id: 'msg_gateway123', model: 'claude-test', created: 1_700_000_000, includeUsage: false };

// ---------------------------------------------------------------------------------------------
// Helpers

/** Bytes in awkward chunks (splitting events and UTF-8 sequences) → IR events. */
async function decodeBytes(bytes: Buffer, chunk = 7): Promise<IRStreamEvent[]> {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunk) chunks.push(bytes.subarray(i, i + chunk));
  return lastValueFrom(from(chunks).pipe(parseSSE(), dialect.decodeStream(), toArray()));
}

async function encode(events: IRStreamEvent[]): Promise<Buffer> {
  const bufs = await lastValueFrom(from(events).pipe(dialect.encodeStream(ctx), toArray()));
  return Buffer.concat(bufs);
}

interface Block {
  type: string;
  text?: string;
  thinking?: string;
  signature?: string;
  id?: string;
  name?: string;
  inputJson?: string;
  data?: string;
}

interface Summary {
  content: Block[];
  usage: Partial<IRUsage>;
  stopReason: string | null | undefined;
  error?: { kind: string; message: string };
  ended: boolean;
}

/** What a consumer of the IR ends up with. */
function summarizeIR(events: IRStreamEvent[]): Summary {
  const content: Block[] = [];
  const byIndex = new Map<number, Block>();
  let usage: Partial<IRUsage> = {};
  let stopReason: string | null | undefined;
  let error: Summary['error'];
  let ended = false;
  for (const ev of events) {
    if (ev.type === 'start') usage = { ...usage, ...ev.usage };
    else if (ev.type === 'block_start') {
      const b: Block = { type: ev.block.type };
      if (ev.block.type === 'text') b.text = '';
      if (ev.block.type === 'thinking') Object.assign(b, { thinking: '', signature: '' });
      if (ev.block.type === 'tool_use') Object.assign(b, { id: ev.block.id, name: ev.block.name, inputJson: '' });
      if (ev.block.type === 'redacted_thinking') b.data = ev.block.data;
      byIndex.set(ev.index, b);
      content.push(b);
    } else if (ev.type === 'delta') {
      const b = byIndex.get(ev.index)!;
      if (ev.delta.type === 'text') b.text += ev.delta.text;
      if (ev.delta.type === 'thinking') b.thinking += ev.delta.thinking;
      if (ev.delta.type === 'signature') b.signature += ev.delta.signature;
      if (ev.delta.type === 'input_json') b.inputJson += ev.delta.partialJson;
    } else if (ev.type === 'stop') {
      stopReason = ev.stopReason;
      usage = { ...usage, ...ev.usage };
    } else if (ev.type === 'error') error = { kind: ev.kind, message: ev.message };
    else if (ev.type === 'end') ended = true;
  }
  return { content, usage, stopReason, error, ended };
}

interface WireEvent {
  event?: string;
  data: any;
}

/** An independent reading of Anthropic wire text: no parseSSE, no decoder. */
function wireEvents(text: string): WireEvent[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const lines = chunk.split(/\r?\n/);
      const event = lines
        .find((l) => l.startsWith('event:'))
        ?.slice(6)
        .trim();
      const data = lines
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      return { event, data: JSON.parse(data) };
    });
}

/** The reference answer of a wire stream, accumulated the way Anthropic's SDK does it. */
function summarizeWire(text: string): Summary {
  const content: Block[] = [];
  const usage: Partial<IRUsage> = {};
  let stopReason: string | null | undefined;
  let error: Summary['error'];
  let ended = false;
  const applyUsage = (u: any) => {
    if (!u) return;
    if (typeof u.input_tokens === 'number') usage.input = u.input_tokens;
    if (typeof u.output_tokens === 'number') usage.output = u.output_tokens;
    if (typeof u.cache_read_input_tokens === 'number') usage.cacheRead = u.cache_read_input_tokens;
    if (typeof u.cache_creation_input_tokens === 'number') usage.cacheWrite = u.cache_creation_input_tokens;
  };
  for (const { data } of wireEvents(text)) {
    switch (data.type) {
      case 'message_start':
        applyUsage(data.message.usage);
        break;
      case 'content_block_start': {
        const cb = data.content_block;
        const b: Block = { type: cb.type };
        if (cb.type === 'text') b.text = cb.text;
        if (cb.type === 'thinking') Object.assign(b, { thinking: cb.thinking, signature: cb.signature });
        if (cb.type === 'tool_use') Object.assign(b, { id: cb.id, name: cb.name, inputJson: '' });
        content[data.index] = b;
        break;
      }
      case 'content_block_delta': {
        const b = content[data.index]!;
        const d = data.delta;
        if (d.type === 'text_delta') b.text += d.text;
        if (d.type === 'thinking_delta') b.thinking += d.thinking;
        if (d.type === 'signature_delta') b.signature = d.signature;
        if (d.type === 'input_json_delta') b.inputJson += d.partial_json;
        break;
      }
      case 'message_delta':
        stopReason = data.delta.stop_reason;
        applyUsage(data.usage);
        break;
      case 'message_stop':
        ended = true;
        break;
      case 'error':
        error = { kind: data.error.type, message: data.error.message };
        break;
    }
  }
  return { content, usage, stopReason, error, ended };
}

const ERROR_KIND: Record<string, string> = {
  overloaded_error: 'overloaded',
  rate_limit_error: 'rate_limit',
  api_error: 'upstream',
};

/** The final message as @anthropic-ai/sdk's MessageStream builds it from our bytes. */
async function sdkFinalMessage(bytes: Buffer) {
  const client = new Anthropic({
    apiKey: 'ar-test',
    maxRetries: 0,
    fetch: async () =>
      new Response(new Uint8Array(bytes), {
        status: 200,
        headers: { 'content-type': 'text/event-stream; charset=utf-8' },
      }),
  });
  const stream = client.messages.stream({
    model: 'claude-test',
    max_tokens: 100,
    messages: [{ role: 'user', content: 'hi' }],
  });
  return stream.finalMessage();
}

/** Structural invariants of a messages-surface stream. */
function checkWireShape(t: Tap, text: string) {
  const events = wireEvents(text);
  for (const e of events) t.equal(e.event, e.data.type, `event name matches data type (${e.event})`);
  const errorAt = events.findIndex((e) => e.data.type === 'error');
  if (errorAt !== -1) t.equal(errorAt, events.length - 1, 'nothing follows an error event');
  else {
    t.equal(events[0]?.data.type, 'message_start', 'message_start comes first');
    t.equal(events.at(-1)?.data.type, 'message_stop', 'message_stop comes last');
  }
  let next = 0;
  let open: number | null = null;
  for (const { data } of events) {
    if (data.type === 'content_block_start') {
      t.equal(open, null, 'one block open at a time');
      t.equal(data.index, next++, 'block indices are consecutive from 0');
      open = data.index;
    } else if (data.type === 'content_block_delta') t.equal(data.index, open, 'a delta targets the open block');
    else if (data.type === 'content_block_stop') {
      t.equal(data.index, open, 'stop closes the open block');
      open = null;
    } else if (data.type === 'message_delta') t.equal(open, null, 'blocks are closed before message_delta');
  }
}

// ---------------------------------------------------------------------------------------------
// Streams

/** Spot values read off the fixtures by hand, so the decoder is not only checked against itself. */
const SPOT: Record<string, (t: Tap, s: Summary) => void> = {
  'stream_text_ping.sse': (t, s) => {
    t.equal(s.content[0]?.text, "The weather in San Francisco, CA is currently **68°F and Sunny**. It's a nice day!");
    t.same(s.usage, { input: 770, output: 27, cacheRead: 0, cacheWrite: 0 });
    t.equal(s.stopReason, 'end_turn');
  },
  'stream_tool_use_input_json_delta.sse': (t, s) => {
    t.match(s.content[0], { type: 'tool_use', id: 'toolu_01TJoxvFknVdnV9XpWFPaRmY', name: 'get_weather' });
    t.same(JSON.parse(s.content[0]!.inputJson!), { location: 'San Francisco, CA', units: 'f' });
    t.same(s.usage, { input: 656, output: 74, cacheRead: 0, cacheWrite: 0 });
    t.equal(s.stopReason, 'tool_use');
  },
  'stream_text_then_tool_use.sse': (t, s) => {
    t.equal(s.content[0]?.text, "I'll check the current weather in Paris for you.");
    t.match(s.content[1], { type: 'tool_use', id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather' });
    t.same(JSON.parse(s.content[1]!.inputJson!), { location: 'Paris' });
    // message_delta only has output_tokens here: input comes from message_start.
    t.same(s.usage, { input: 377, output: 65, cacheRead: 0, cacheWrite: 0 });
  },
  'stream_thinking_signature_delta.sse': (t, s) => {
    t.match(s.content[0]?.thinking, /^I'm working through the Euclidean algorithm.*greatest common divisor\.$/);
    t.match(s.content[0]?.signature, /^EsECCokBCBAYAipA9i3HF1aHpQITkdN8.*PGAE=$/);
    t.equal(s.content[0]?.signature?.length, 436);
    t.match(s.content[1]?.text, /^# Finding GCD\(1071, 462\)/);
    t.same(s.usage, { input: 47, output: 373, cacheRead: 0, cacheWrite: 0 });
  },
  'stream_thinking_display_omitted.sse': (t, s) => {
    t.equal(s.content[0]?.thinking, '');
    t.match(s.content[0]?.signature, /^EsECCokBCBAYAipA.*lyaGAE=$/);
    t.equal(s.usage.output, 496);
  },
  'stream_cache_write.sse': (t, s) => {
    t.same(s.usage, { input: 3, output: 1, cacheRead: 0, cacheWrite: 18639 });
    t.equal(s.stopReason, 'max_tokens');
  },
  'stream_cache_read.sse': (t, s) => {
    t.same(s.usage, { input: 3, output: 1, cacheRead: 18639, cacheWrite: 0 });
    t.equal(s.content[0]?.text, 'OK');
  },
  'stream_error_overloaded_midstream.composite.sse': (t, s) => {
    t.equal(s.content[0]?.text, 'The weather in San Francisco, CA is currently');
    t.same(s.error, { kind: 'overloaded', message: 'Overloaded' });
    t.equal(s.ended, false);
    t.equal(s.stopReason, undefined);
  },
  'docs/docs_stream_basic_text.sse': (t, s) => {
    t.equal(s.content[0]?.text, 'Hello!');
    t.same(s.usage, { input: 25, output: 15 });
  },
  'docs/docs_stream_error_event.sse': (t, s) => {
    t.same(s.content, []);
    t.same(s.error, { kind: 'overloaded', message: 'Overloaded' });
  },
  'docs/docs_stream_text_then_tool_use.sse': (t, s) => {
    t.equal(s.content[0]?.text, "Okay, let's check the weather for San Francisco, CA:");
    t.same(JSON.parse(s.content[1]!.inputJson!), { location: 'San Francisco, CA' });
    t.same(s.usage, { input: 472, output: 89 });
  },
  'docs/docs_stream_thinking.sse': (t, s) => {
    t.equal(s.content[0]?.signature, 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...');
    t.match(s.content[0]?.thinking, /^I need to find the GCD.*= 21\.$/s);
    t.same(s.usage, {});
    t.equal(s.stopReason, 'end_turn');
  },
};

const zeroFill = (u: Partial<IRUsage>): IRUsage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...u });

for (const file of sseFixtures) {
  t.test(`decodeStream + encodeStream: ${file}`, async (t) => {
    const bytes = read(file);
    const events = await decodeBytes(bytes);
    const got = summarizeIR(events);
    const want = summarizeWire(bytes.toString('utf8'));
    if (want.error) want.error.kind = ERROR_KIND[want.error.kind] ?? 'upstream';

    t.same(got.content, want.content, 'content matches the wire');
    t.same(got.usage, want.usage, 'usage: final values from message_delta, else message_start');
    t.equal(got.stopReason, want.stopReason, 'stop reason');
    t.same(got.error, want.error, 'error');
    t.equal(got.ended, want.ended, 'end');
    for (const b of got.content)
      if (b.type === 'tool_use') t.doesNotThrow(() => JSON.parse(b.inputJson!), 'tool input is JSON');
    // Thinking signatures are checked against the raw file text, byte for byte.
    for (const b of got.content)
      if (b.type === 'thinking')
        t.ok(
          bytes.includes(`"signature": "${b.signature}"`) || bytes.includes(`"signature":"${b.signature}"`),
          'signature verbatim',
        );
    t.ok(SPOT[file], 'fixture has spot checks');
    SPOT[file]?.(t, got);

    // Round trip through the messages surface.
    const wire = await encode(events);
    const text = wire.toString('utf8');
    checkWireShape(t, text);
    const again = summarizeIR(await decodeBytes(wire, 5));
    t.same(again.content, got.content, 'round trip: content');
    t.same(zeroFill(again.usage), zeroFill(got.usage), 'round trip: usage');
    t.equal(again.stopReason, got.stopReason, 'round trip: stop reason');
    t.same(again.error, got.error, 'round trip: error');
    t.equal(again.ended, got.ended, 'round trip: end');
    t.notOk(text.includes('"request_id"'), 'in-stream errors look like Anthropic’s');

    // What the official SDK makes of it.
    if (got.error) {
      await t.rejects(sdkFinalMessage(wire), /Overloaded/, 'the SDK surfaces the error');
      return;
    }
    const msg = await sdkFinalMessage(wire);
    t.equal(msg.id, ctx.id);
    t.equal(msg.model, ctx.model);
    t.equal(msg.stop_reason, got.stopReason);
    const u = zeroFill(got.usage);
    t.match(msg.usage, {
      input_tokens: u.input,
      output_tokens: u.output,
      cache_read_input_tokens: u.cacheRead,
      cache_creation_input_tokens: u.cacheWrite,
    });
    t.equal(msg.content.length, got.content.length);
    got.content.forEach((b, i) => {
      const m = msg.content[i] as any;
      t.equal(m.type, b.type);
      if (b.type === 'text') t.equal(m.text, b.text);
      if (b.type === 'thinking') t.same([m.thinking, m.signature], [b.thinking, b.signature]);
      if (b.type === 'tool_use') t.same([m.id, m.name, m.input], [b.id, b.name, JSON.parse(b.inputJson!)]);
    });
  });
}

t.test('decodeStream: the exchanges’ recorded streams', async (t) => {
  let n = 0;
  for (const file of readdirSync(path.join(fixtures, 'exchanges'))) {
    for (const ex of readJSON(`exchanges/${file}`)) {
      const body = ex.response.body;
      if (typeof body !== 'string' || !body.startsWith('event:')) continue;
      n++;
      const got = summarizeIR(await decodeBytes(Buffer.from(body)));
      const want = summarizeWire(body);
      t.same(got.content, want.content, `${file}: content`);
      t.same(got.usage, want.usage, `${file}: usage`);
      t.equal(got.stopReason, want.stopReason, `${file}: stop`);
      t.ok(got.ended, `${file}: ended`);
    }
  }
  t.ok(n >= 3, 'found the recorded streams');
});

t.test('decodeStream: JSON is parsed, not matched, and unknown things are skipped', async (t) => {
  const wire = [
    'event: message_start\ndata: {"message":{"id":"m1","model":"x","usage":{"input_tokens":5,"output_tokens":1}},   "type" :  "message_start"}\n\n',
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}\n\n',
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}\n\n',
    'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
    'event: brand_new\ndata: {"type":"brand_new"}\n\n',
    'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":"Hi"}}\n\n',
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{}}}\n\n',
    'event: content_block_delta\r\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" there"}}\r\n\r\n',
    'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n',
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"model_context_window_exceeded","stop_sequence":null},"usage":{"output_tokens":9}}\n\n',
    'event: message_stop\ndata: {"type":"message_stop"}\n\n',
  ].join('');
  const events = await decodeBytes(Buffer.from(wire));
  t.same(events, [
    { type: 'start', id: 'm1', model: 'x', usage: { input: 5, output: 1 } },
    { type: 'block_start', index: 1, block: { type: 'text' } },
    { type: 'delta', index: 1, delta: { type: 'text', text: 'Hi' } },
    { type: 'delta', index: 1, delta: { type: 'text', text: ' there' } },
    { type: 'block_stop', index: 1 },
    { type: 'stop', stopReason: 'max_tokens', stopSequence: null, usage: { input: 5, output: 9 } },
    { type: 'end' },
  ]);
  // …and the skipped index is renumbered on the way out.
  const out = wireEvents((await encode(events)).toString());
  t.same(
    out.filter((e) => e.data.type === 'content_block_start').map((e) => e.data.index),
    [0],
  );
});

t.test('decodeStream: blocks that start with content', async (t) => {
  const wire =
    'data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{"a":1}}}\n\n' +
    'data: {"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"th","signature":"SIG"}}\n\n' +
    'data: {"type":"content_block_start","index":2,"content_block":{"type":"redacted_thinking","data":"opaque"}}\n\n';
  t.same(await decodeBytes(Buffer.from(wire)), [
    { type: 'block_start', index: 0, block: { type: 'tool_use', id: 't1', name: 'f' } },
    { type: 'delta', index: 0, delta: { type: 'input_json', partialJson: '{"a":1}' } },
    { type: 'block_start', index: 1, block: { type: 'thinking' } },
    { type: 'delta', index: 1, delta: { type: 'thinking', thinking: 'th' } },
    { type: 'delta', index: 1, delta: { type: 'signature', signature: 'SIG' } },
    { type: 'block_start', index: 2, block: { type: 'redacted_thinking', data: 'opaque' } },
  ]);
});

t.test('decodeStream: a malformed event is an upstream error and ends decoding', async (t) => {
  const wire =
    'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"x"}}\n\nevent: ping\ndata: {oops\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';
  const events = await decodeBytes(Buffer.from(wire));
  t.equal(events.length, 2);
  t.match(events[1], { type: 'error', kind: 'upstream' });
});

t.test('decodeStream: stop_sequence and rate-limit errors', async (t) => {
  const wire =
    'data: {"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"###"},"usage":{"output_tokens":3}}\n\n' +
    'data: {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}\n\n';
  t.same(await decodeBytes(Buffer.from(wire)), [
    { type: 'stop', stopReason: 'stop_sequence', stopSequence: '###', usage: { output: 3 } },
    { type: 'error', kind: 'rate_limit', message: 'slow down' },
  ]);
});

// ---------------------------------------------------------------------------------------------
// Encoding what an OpenAI upstream produces

t.test('encodeStream: usage known only at stop, skipped and implicit blocks', async (t) => {
  const events: IRStreamEvent[] = [
    { type: 'start', id: 'chatcmpl-1', model: 'gpt-x' },
    { type: 'block_start', index: 0, block: { type: 'thinking' } },
    { type: 'delta', index: 0, delta: { type: 'thinking', thinking: 'hmm' } },
    // no block_stop for 0, and index 3 skips 1 and 2
    { type: 'block_start', index: 3, block: { type: 'text' } },
    { type: 'delta', index: 3, delta: { type: 'text', text: 'Hi' } },
    { type: 'block_stop', index: 3 },
    // a delta whose block never started
    { type: 'delta', index: 7, delta: { type: 'input_json', partialJson: '{"a":' } },
    { type: 'delta', index: 7, delta: { type: 'input_json', partialJson: '1}' } },
    { type: 'stop', stopReason: 'tool_use', usage: { input: 100, output: 20, cacheRead: 30, cacheWrite: 0 } },
    { type: 'end' },
  ];
  const wire = await encode(events);
  const text = wire.toString();
  checkWireShape(t, text);
  const ev = wireEvents(text);
  t.same(ev[0]!.data.message.usage, {
    input_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: 0,
  });
  t.equal(ev[0]!.data.message.id, ctx.id);
  const delta = ev.find((e) => e.data.type === 'message_delta')!.data;
  t.same(delta, {
    type: 'message_delta',
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 30, output_tokens: 20 },
  });
  const starts = ev.filter((e) => e.data.type === 'content_block_start').map((e) => e.data.content_block);
  t.match(starts, [
    { type: 'thinking', thinking: '', signature: '' },
    { type: 'text', text: '' },
    { type: 'tool_use', id: /^toolu_/, input: {} },
  ]);

  const msg = await sdkFinalMessage(wire);
  t.match(msg.usage, {
    input_tokens: 100,
    output_tokens: 20,
    cache_read_input_tokens: 30,
    cache_creation_input_tokens: 0,
  });
  t.match(msg.content, [
    { type: 'thinking', thinking: 'hmm', signature: '' },
    { type: 'text', text: 'Hi' },
    { type: 'tool_use', input: { a: 1 } },
  ]);
  t.equal(msg.stop_reason, 'tool_use');
});

t.test('encodeStream: events before start, split signatures, stop without end', async (t) => {
  const events: IRStreamEvent[] = [
    { type: 'ping' },
    { type: 'block_start', index: 0, block: { type: 'thinking' } },
    { type: 'delta', index: 0, delta: { type: 'thinking', thinking: 'x' } },
    { type: 'delta', index: 0, delta: { type: 'signature', signature: 'AB' } },
    { type: 'delta', index: 0, delta: { type: 'signature', signature: 'CD' } },
    { type: 'delta', index: 0, delta: { type: 'text', text: 'wrong kind' } },
    { type: 'block_stop', index: 0 },
    { type: 'stop', stopReason: null, usage: { output: 4 } },
  ];
  const text = (await encode(events)).toString();
  checkWireShape(t, text);
  const ev = wireEvents(text);
  t.equal(ev[0]!.data.type, 'message_start', 'message_start is synthesized, the early ping dropped');
  const sigs = ev.filter((e) => e.data.delta?.type === 'signature_delta');
  t.same(
    sigs.map((e) => e.data.delta.signature),
    ['ABCD'],
    'one signature_delta, concatenated',
  );
  t.notOk(
    ev.some((e) => e.data.delta?.type === 'text_delta'),
    'a text delta cannot land in a thinking block',
  );
  t.equal(ev.find((e) => e.data.type === 'message_delta')!.data.delta.stop_reason, 'end_turn');
  t.same(ev.find((e) => e.data.type === 'message_delta')!.data.usage, { output_tokens: 4 });
  t.equal(ev.at(-1)!.data.type, 'message_stop', 'a stopped answer gets its message_stop at completion');
});

t.test('encodeStream: an error is the last thing sent', async (t) => {
  const events: IRStreamEvent[] = [
    { type: 'start', id: 'x', model: 'y', usage: { input: 3 } },
    { type: 'block_start', index: 0, block: { type: 'text' } },
    { type: 'delta', index: 0, delta: { type: 'text', text: 'partial' } },
    { type: 'error', kind: 'timeout', message: 'Upstream timed out.' },
    { type: 'delta', index: 0, delta: { type: 'text', text: 'more' } },
    { type: 'stop', stopReason: 'end_turn' },
    { type: 'end' },
  ];
  const text = (await encode(events)).toString();
  const ev = wireEvents(text);
  t.same(ev.at(-1), {
    event: 'error',
    data: { type: 'error', error: { type: 'api_error', message: 'Upstream timed out.' } },
  });
  t.equal(ev.filter((e) => e.data.type === 'error').length, 1);
  t.notOk(text.includes('more'));
  t.notOk(text.includes('message_stop'));
});

// ---------------------------------------------------------------------------------------------
// Whole answers

t.test('parseResponse / renderResponse on every JSON fixture', async (t) => {
  const bodies: [string, any][] = jsonFixtures.map((f) => [f, readJSON(f)]);
  for (const file of readdirSync(path.join(fixtures, 'exchanges'))) {
    for (const ex of readJSON(`exchanges/${file}`)) {
      if (ex.response.status_code === 200 && typeof ex.response.body === 'object')
        bodies.push([`exchanges/${file}`, ex.response.body]);
    }
  }
  t.ok(bodies.length >= 7);
  for (const [name, body] of bodies) {
    const ir = dialect.parseResponse(body);
    t.equal(ir.id, body.id, `${name}: id`);
    t.equal(ir.stopReason, body.stop_reason, `${name}: stop reason`);
    t.same(
      ir.usage,
      {
        input: body.usage.input_tokens,
        output: body.usage.output_tokens,
        cacheRead: body.usage.cache_read_input_tokens,
        cacheWrite: body.usage.cache_creation_input_tokens,
      },
      `${name}: usage`,
    );
    const rendered = dialect.renderResponse(ir, { ...ctx, id: body.id, model: body.model }) as any;
    // The fields the gateway carries, per block type; extras like `caller` are not carried.
    const keep: Record<string, string[]> = {
      text: ['type', 'text'],
      thinking: ['type', 'thinking', 'signature'],
      tool_use: ['type', 'id', 'name', 'input'],
    };
    const expected = body.content.map((b: any) => Object.fromEntries(keep[b.type]!.map((k) => [k, b[k]])));
    t.same(rendered.content, expected, `${name}: content`);
    t.match(
      rendered,
      {
        id: body.id,
        type: 'message',
        role: 'assistant',
        model: body.model,
        stop_reason: body.stop_reason,
        stop_sequence: null,
      },
      `${name}: envelope`,
    );
    t.same(
      rendered.usage,
      Object.fromEntries(
        ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'].map((k) => [
          k,
          body.usage[k],
        ]),
      ),
      `${name}: rendered usage`,
    );
    t.same(dialect.parseResponse(rendered), ir, `${name}: round trip`);
  }
  const thinking = readJSON('messages_thinking.json');
  const rendered = dialect.renderResponse(dialect.parseResponse(thinking), ctx) as any;
  t.equal(rendered.content[0].signature, thinking.content[0].signature, 'signature byte for byte');
});

t.test('renderResponse: unsigned thinking, null stop reason', async (t) => {
  const ir: IRResponse = {
    id: 'chatcmpl-1',
    model: 'gpt-x',
    content: [
      { type: 'thinking', thinking: 'reasoning from an OpenAI upstream' },
      { type: 'text', text: 'answer' },
      { type: 'tool_use', id: 'call_1', name: 'f', input: '{"q":"x"}' },
    ],
    stopReason: null,
    usage: { input: 1, output: 2, cacheRead: 3, cacheWrite: 4 },
  };
  const out = dialect.renderResponse(ir, ctx) as any;
  t.same(out.content, [
    { type: 'thinking', thinking: 'reasoning from an OpenAI upstream', signature: '' },
    { type: 'text', text: 'answer' },
    { type: 'tool_use', id: 'call_1', name: 'f', input: { q: 'x' } },
  ]);
  t.equal(out.stop_reason, 'end_turn');
  t.equal(out.id, ctx.id);
  t.equal(out.model, ctx.model);
  t.same(out.usage, { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 3, cache_creation_input_tokens: 4 });
  t.throws(
    () => dialect.parseResponse({ type: 'error' }),
    new GatewayError('upstream', 'The upstream returned a malformed message.'),
  );
});

// ---------------------------------------------------------------------------------------------
// Errors

t.test('errorResponse and errorEvent', async (t) => {
  const table: [ErrorKind, number, string][] = [
    ['invalid_request', 400, 'invalid_request_error'],
    ['authentication', 401, 'authentication_error'],
    ['insufficient_balance', 402, 'billing_error'],
    ['permission', 403, 'permission_error'],
    ['not_found', 404, 'not_found_error'],
    ['too_large', 413, 'request_too_large'],
    ['rate_limit', 429, 'rate_limit_error'],
    ['upstream', 502, 'api_error'],
    ['overloaded', 529, 'overloaded_error'],
    ['timeout', 504, 'api_error'],
    ['unavailable', 503, 'api_error'],
  ];
  for (const [kind, status, type] of table) {
    const res = dialect.errorResponse(new GatewayError(kind, `m-${kind}`), 'req_1');
    t.equal(res.status, status, kind);
    t.same(res.body, { type: 'error', error: { type, message: `m-${kind}` }, request_id: 'req_1' }, kind);
  }
  const ev = dialect.errorEvent(new GatewayError('overloaded', 'Overloaded'), 'req_2').toString();
  t.match(ev, /^event: error\ndata: .*\n\n$/);
  t.same(JSON.parse(ev.slice(ev.indexOf('data: ') + 6)), {
    type: 'error',
    error: { type: 'overloaded_error', message: 'Overloaded' },
    request_id: 'req_2',
  });
});

t.test('upstreamErrorMessage on the recorded error bodies', async (t) => {
  const files = readdirSync(path.join(fixtures, 'errors')).filter((f) => f !== 'index.json');
  t.ok(files.length >= 6);
  for (const f of files) {
    const body = readJSON(`errors/${f}`);
    t.equal(dialect.upstreamErrorMessage(body), body.error.message, f);
  }
  t.equal(dialect.upstreamErrorMessage('nope'), undefined);
  t.equal(dialect.upstreamErrorMessage({ error: { message: 5 } }), undefined);
});

// ---------------------------------------------------------------------------------------------
// Requests from clients

const base = { model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };

t.test('parseRequest: a full request', async (t) => {
  const ir = dialect.parseRequest({
    model: 'claude-sonnet-4',
    max_tokens: 2048,
    system: [
      { type: 'text', text: 'Be terse.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Use SI units.' },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'dropped' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Need a tool.', signature: 'c2ln+/=' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '20C' }], is_error: false },
          { type: 'tool_result', tool_use_id: 'toolu_2', is_error: true },
        ],
      },
    ],
    tools: [
      {
        name: 'get_weather',
        description: 'Weather',
        input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
    ],
    tool_choice: { type: 'any', disable_parallel_tool_use: true },
    stop_sequences: ['###'],
    temperature: 0.2,
    top_p: 0.9,
    top_k: 5,
    stream: true,
    thinking: { type: 'enabled', budget_tokens: 1500 },
    metadata: { user_id: 'u-42' },
    output_config: { anything: true },
  });
  const want: IRRequest = {
    model: 'claude-sonnet-4',
    system: ['Be terse.', 'Use SI units.'],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather?' },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0' } },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Need a tool.', signature: 'c2ln+/=' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', toolUseId: 'toolu_1', content: [{ type: 'text', text: '20C' }] },
          { type: 'tool_result', toolUseId: 'toolu_2', content: '', isError: true },
        ],
      },
    ],
    tools: [
      {
        name: 'get_weather',
        description: 'Weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
      },
    ],
    toolChoice: { type: 'required' },
    parallelToolCalls: false,
    maxTokens: 2048,
    temperature: 0.2,
    topP: 0.9,
    stop: ['###'],
    stream: true,
    includeUsage: false,
    thinking: { budgetTokens: 1500 },
    reasoningEffort: 'low',
    user: 'u-42',
  };
  t.same(ir, want);
  t.same(dialect.parseRequest({ ...base, tool_choice: { type: 'tool', name: 'f' } }).toolChoice, {
    type: 'tool',
    name: 'f',
  });
  t.same(dialect.parseRequest({ ...base, tool_choice: { type: 'none' } }).toolChoice, { type: 'none' });
  t.equal(dialect.parseRequest({ ...base, thinking: { type: 'adaptive' } }).thinking, undefined);
  t.equal(dialect.parseRequest(base).stream, false);
  t.same(dialect.parseRequest({ ...base, system: 'S' }).system, ['S']);
});

t.test('parseRequest: lenient where the vendor decides (issue 15)', async (t) => {
  const ir = dialect.parseRequest({
    ...base,
    system: [
      { type: 'text', text: 'S' },
      { type: 'future_block', data: 1 },
    ],
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'system', content: [{ type: 'text', text: 'Mid.' }, { type: 'future_block' }] },
      { role: 'critic', content: 'not a known role' },
      { role: 'assistant', content: [{ type: 'future_block' }, { type: 'text', text: 'ok' }] },
    ],
    tool_choice: { type: 'future_choice', disable_parallel_tool_use: true },
    context_management: { edits: [{ type: 'clear_thinking_20251015' }] },
  });
  t.same(ir.system, ['S'], 'non-text system blocks stay out of the IR');
  t.same(
    ir.messages,
    [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'system', content: [{ type: 'text', text: 'Mid.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
    ],
    'the system message keeps its place; an unknown role has no IR form',
  );
  t.equal(ir.toolChoice, undefined, 'an unknown tool choice maps to nothing');
  t.equal(ir.parallelToolCalls, false);

  const effort = (extra: object) => dialect.parseRequest({ ...base, ...extra }).reasoningEffort;
  t.equal(effort({ thinking: { type: 'adaptive' } }), 'high', "adaptive: Anthropic's default effort");
  t.equal(
    effort({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } }),
    'low',
    'an explicit effort wins',
  );
  t.equal(effort({ output_config: { effort: 'max' } }), 'high');
  t.equal(effort({ output_config: { effort: 'medium' } }), 'medium');
  t.equal(effort({ output_config: { effort: 'unheard-of' } }), undefined);
  t.equal(effort({ thinking: { type: 'enabled', budget_tokens: 8000 } }), 'medium');
  t.equal(effort({ thinking: { type: 'enabled', budget_tokens: 20000 } }), 'high');
  t.equal(effort({ thinking: { type: 'disabled' } }), undefined);
});

t.test('parseRequest: the recorded SDK requests', async (t) => {
  let n = 0;
  for (const file of readdirSync(path.join(fixtures, 'exchanges'))) {
    for (const ex of readJSON(`exchanges/${file}`)) {
      const ir = dialect.parseRequest(ex.request.body);
      t.equal(ir.model, ex.request.body.model);
      t.equal(ir.messages.length, ex.request.body.messages.length);
      n++;
    }
  }
  t.ok(n >= 8);
});

t.test('parseRequest: validation errors name the field', async (t) => {
  const cases: [unknown, string][] = [
    [[], 'Request body must be a JSON object'],
    [{ ...base, max_tokens: undefined }, 'max_tokens: Field required'],
    [{ ...base, max_tokens: 0 }, 'max_tokens:'],
    [{ ...base, max_tokens: 1.5 }, 'max_tokens:'],
    [{ ...base, model: '' }, 'model:'],
    [{ ...base, messages: [] }, 'messages: at least one message is required'],
    [{ ...base, messages: [{ role: 5, content: 'x' }] }, 'messages.0.role:'],
    [{ ...base, messages: [{ role: 'user' }] }, 'messages.0.content: Field required'],
    [{ ...base, messages: [{ role: 'user', content: 5 }] }, 'messages.0.content:'],
    [
      {
        ...base,
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: [{ type: 'text', text: 1 }] },
        ],
      },
      'messages.1.content.0.text:',
    ],
    [
      { ...base, messages: [{ role: 'user', content: [{ text: 'no type' }] }] },
      'messages.0.content.0.type: Field required',
    ],
    [
      {
        ...base,
        messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }] }],
      },
      'messages.0.content.0.source.data: Field required',
    ],
    [
      { ...base, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f' }] }] },
      'messages.0.content.0.input: Field required',
    ],
    [
      {
        ...base,
        messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text' }] }] }],
      },
      'messages.0.content.0.content.0.text: Field required',
    ],
    [
      { ...base, messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'x' }] }] },
      'messages.0.content.0.signature: Field required',
    ],
    [{ ...base, system: [{ text: 'no type' }] }, 'system.0.type: Field required'],
    [{ ...base, messages: [{ role: 'system', content: [{ type: 'text', text: 2 }] }] }, 'messages.0.content.0.text:'],
    [{ ...base, system: 7 }, 'system:'],
    [{ ...base, temperature: 1.5 }, 'temperature:'],
    [{ ...base, top_p: -1 }, 'top_p:'],
    [{ ...base, stream: 'yes' }, 'stream:'],
    [{ ...base, stop_sequences: 'STOP' }, 'stop_sequences:'],
    [{ ...base, tools: [{ name: 'f' }] }, 'tools.0.input_schema: Field required'],
    [{ ...base, tool_choice: { type: 'tool' } }, 'tool_choice.name: Field required'],
    [{ ...base, tool_choice: { type: 5 } }, 'tool_choice.type:'],
    [{ ...base, output_config: { effort: 3 } }, 'output_config.effort:'],
    [{ ...base, thinking: { type: 'enabled', budget_tokens: 100 } }, 'thinking.budget_tokens:'],
    [{ ...base, thinking: { type: 'enabled' } }, 'thinking.budget_tokens: Field required'],
    [{ ...base, metadata: { user_id: 5 } }, 'metadata.user_id:'],
  ];
  for (const [body, prefix] of cases) {
    try {
      dialect.parseRequest(body);
      t.fail(`accepted: ${prefix}`);
    } catch (err) {
      t.ok(err instanceof GatewayError && err.kind === 'invalid_request', `${prefix} is invalid_request`);
      t.ok(
        (err as Error).message.startsWith(prefix),
        `${JSON.stringify((err as Error).message)} starts with ${prefix}`,
      );
    }
  }
});

// ---------------------------------------------------------------------------------------------
// Requests to upstreams

/** JSON with sorted keys at every depth. */
function canonical(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(canonical).join(',')}]`;
  if (x !== null && typeof x === 'object') {
    return `{${Object.keys(x)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((x as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(x);
}

const irBase: IRRequest = { model: 'm', system: [], messages: [], stream: false, includeUsage: false };

t.test('buildRequest: turns merge, alternate, and start with the user', async (t) => {
  const body = dialect.buildRequest(
    {
      ...irBase,
      system: ['You are helpful.', '', 'Be brief.'],
      maxTokens: 300,
      messages: [
        { role: 'assistant', content: [{ type: 'text', text: 'Hello, how can I help?' }] },
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        { role: 'user', content: [{ type: 'text', text: '' }] },
        { role: 'user', content: [{ type: 'text', text: 'In Paris.' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'unsigned, from an OpenAI upstream' },
            { type: 'thinking', thinking: 'signed', signature: 'Er4B+/=' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: '{"city":"Paris"}' },
          ],
        },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'only unsigned' }] },
        { role: 'user', content: [{ type: 'text', text: 'also this' }] },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: 'call_1', content: '20C' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'It is  ' }] },
      ],
    },
    'claude-upstream',
  );
  t.same(body, {
    model: 'claude-upstream',
    max_tokens: 300,
    system: 'You are helpful.\n\nBe brief.',
    messages: [
      { role: 'user', content: [{ type: 'text', text: '.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello, how can I help?' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather?' },
          { type: 'text', text: 'In Paris.' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'signed', signature: 'Er4B+/=' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '20C' },
          { type: 'text', text: 'also this' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'It is' }] },
    ],
    // The history used a tool the request does not define.
    tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
    tool_choice: { type: 'none' },
  });
  const roles = (body.messages as { role: string }[]).map((m) => m.role);
  const trailing = dialect.buildRequest(
    {
      ...irBase,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'q' }] },
        { role: 'assistant', content: [{ type: 'text', text: '  ' }] },
      ],
    },
    'up',
  );
  t.same(
    trailing.messages,
    [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
    'a whitespace-only prefill disappears',
  );
  for (let i = 1; i < roles.length; i++) t.not(roles[i], roles[i - 1], 'roles alternate');
});

t.test('buildRequest: parameters', async (t) => {
  const tools = [
    { name: 'f', description: 'F', parameters: { type: 'object', properties: { a: { type: 'string' } } } },
    { name: 'g', parameters: {} },
  ];
  const messages: IRRequest['messages'] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];
  const body = dialect.buildRequest(
    {
      ...irBase,
      messages,
      tools,
      toolChoice: { type: 'required' },
      parallelToolCalls: false,
      temperature: 1.7,
      topP: 0.5,
      stop: ['END'],
      stream: true,
      user: 'u-1',
    },
    'up',
  );
  t.same(body, {
    model: 'up',
    max_tokens: 4096,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools: [
      { name: 'f', description: 'F', input_schema: { type: 'object', properties: { a: { type: 'string' } } } },
      { name: 'g', input_schema: { type: 'object', properties: {} } },
    ],
    tool_choice: { type: 'any', disable_parallel_tool_use: true },
    stop_sequences: ['END'],
    temperature: 1,
    top_p: 0.5,
    stream: true,
    metadata: { user_id: 'u-1' },
  });
  t.same(
    dialect.buildRequest({ ...irBase, messages, tools, toolChoice: { type: 'tool', name: 'g' } }, 'up').tool_choice,
    { type: 'tool', name: 'g' },
  );
  t.same(dialect.buildRequest({ ...irBase, messages, tools, parallelToolCalls: false }, 'up').tool_choice, {
    type: 'auto',
    disable_parallel_tool_use: true,
  });
  t.same(
    dialect.buildRequest({ ...irBase, messages, tools, toolChoice: { type: 'none' }, parallelToolCalls: false }, 'up')
      .tool_choice,
    { type: 'none' },
  );
  t.notOk('tool_choice' in dialect.buildRequest({ ...irBase, messages, tools }, 'up'));
  t.equal(dialect.buildRequest({ ...irBase, messages, temperature: -1 }, 'up').temperature, 0);

  // Thinking and its constraints.
  const thinking = dialect.buildRequest(
    { ...irBase, messages, maxTokens: 8000, thinking: { budgetTokens: 2000 }, temperature: 0.3, topP: 0.5 },
    'up',
  );
  t.same(thinking.thinking, { type: 'enabled', budget_tokens: 2000 });
  t.notOk('temperature' in thinking, 'temperature cannot be set with thinking');
  t.notOk('top_p' in thinking, 'top_p below 0.95 cannot be set with thinking');
  t.same(
    dialect.buildRequest({ ...irBase, messages, maxTokens: 3000, thinking: { budgetTokens: 5000 } }, 'up').thinking,
    { type: 'enabled', budget_tokens: 2999 },
  );
  t.notOk(
    'thinking' in
      dialect.buildRequest({ ...irBase, messages, maxTokens: 1000, thinking: { budgetTokens: 5000 } }, 'up'),
  );
  t.notOk(
    'thinking' in
      dialect.buildRequest(
        {
          ...irBase,
          messages,
          tools,
          toolChoice: { type: 'required' },
          maxTokens: 8000,
          thinking: { budgetTokens: 2000 },
        },
        'up',
      ),
  );
  // A reasoning effort (OpenAI client) becomes a budget inside max_tokens; none and minimal, no thinking.
  t.same(dialect.buildRequest({ ...irBase, messages, maxTokens: 30000, reasoningEffort: 'medium' }, 'up').thinking, {
    type: 'enabled',
    budget_tokens: 8192,
  });
  t.same(dialect.buildRequest({ ...irBase, messages, maxTokens: 10000, reasoningEffort: 'high' }, 'up').thinking, {
    type: 'enabled',
    budget_tokens: 9999,
  });
  t.notOk(
    'thinking' in dialect.buildRequest({ ...irBase, messages, maxTokens: 30000, reasoningEffort: 'minimal' }, 'up'),
  );
});

t.test('buildRequest: a mid-conversation system message joins the system prompt', async (t) => {
  const body = dialect.buildRequest(
    {
      ...irBase,
      system: ['First.'],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'system', content: [{ type: 'text', text: 'Later.' }] },
        { role: 'user', content: [{ type: 'text', text: 'more' }] },
      ],
    },
    'up',
  );
  t.equal(body.system, 'First.\n\nLater.');
  t.same(body.messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'hi' },
        { type: 'text', text: 'more' },
      ],
    },
  ]);
});

t.test('buildRequest ∘ parseRequest keeps an Anthropic conversation', async (t) => {
  for (const file of readdirSync(path.join(fixtures, 'exchanges'))) {
    for (const ex of readJSON(`exchanges/${file}`)) {
      const req = ex.request.body;
      const body = dialect.buildRequest(dialect.parseRequest(req), req.model) as any;
      t.equal(body.model, req.model);
      t.equal(body.max_tokens, req.max_tokens);
      t.equal(body.stream, req.stream);
      // The SDK's recorded follow-up turns are user, user (merged) or user, assistant, user.
      const flat = (req.messages as any[]).flatMap((m) =>
        typeof m.content === 'string'
          ? [{ type: 'text', text: m.content }]
          : m.content.map(({ caller: _c, ...b }: any) => b),
      );
      // Merging may move a tool_result ahead of text in its turn, so compare as multisets.
      const sorted = (blocks: any[]) => blocks.map(canonical).sort();
      t.same(sorted((body.messages as any[]).flatMap((m) => m.content)), sorted(flat), `${file}: blocks survive`);
      t.same(body.tools, req.tools, `${file}: tools survive`);
    }
  }
});
