// A translated stream with its text lane (src/stream/text-lane.ts) must reach the client as it
// does without one: the same events in the same order, byte for byte wherever the text has no
// escapes (where it has, the lane keeps the upstream's escapes: the same JSON string all the
// same), the same text counted, the same usage. Each case runs one stream both ways, a read per
// event as a paced upstream sends them, and counts what the lane took.
import t, { type Test } from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { anthropic } from '../../src/dialects/anthropic/index.js';
import type { Dialect, RenderContext } from '../../src/dialects/dialect.js';
import { gemini } from '../../src/dialects/gemini/index.js';
import { openai } from '../../src/dialects/openai/index.js';
import { responses } from '../../src/dialects/responses/index.js';
import { meterIR, StreamMeter } from '../../src/inference/meter.js';
import { releaseScratch } from '../../src/stream/scratch.js';
import { Envelope } from '../../src/stream/envelope.js';
import { SSEDecoder, type SSEEvent } from '../../src/stream/sse.js';
import { frameOf, TextLane } from '../../src/stream/text-lane.js';
import { upstreamEvents, Valve } from '../../src/stream/valve.js';
import type { BodySink, UpstreamBody } from '../../src/upstream/client.js';

const ctx = (includeUsage: boolean): RenderContext =>
  ({
    id: 'msg_lane',
    model: 'catalogue-model',
    created: 1764000000,
    includeUsage,
    requestId: 'req_lane',
  }) as RenderContext;

/** An upstream body that hands each event to the stream in a read of its own, then ends. */
function bodyOf(wire: string): UpstreamBody {
  const reads = wire.split(/(?<=\n\n)/).map((s) => Buffer.from(s));
  return {
    consume(sink: BodySink) {
      for (const r of reads) sink.data(r);
      sink.end();
    },
    pause() {},
    resume() {},
    cancel() {},
  } as unknown as UpstreamBody;
}

interface Run {
  events: string[];
  text: string;
  usage: unknown;
  /** Events the lane wrote. */
  taken: number;
}

async function translate(
  wire: string,
  from: Dialect,
  to: Dialect,
  withLane: boolean,
  includeUsage = true,
): Promise<Run> {
  const meter = new StreamMeter({ body: '{}', dialect: from, maxImageTokens: 0 });
  const lane = withLane ? new TextLane(meter) : undefined;
  const valve = new Valve();
  const events: string[] = [];
  let taken = 0;
  valve.writer = {
    next(chunk: Buffer) {
      taken++;
      events.push(chunk.toString('utf8'));
      releaseScratch();
    },
    flush() {},
  };
  await new Promise<void>((resolve, reject) =>
    upstreamEvents(bodyOf(wire), valve, lane)
      .pipe(from.decodeStream(lane), meterIR(meter), to.encodeStream(ctx(includeUsage), lane))
      .subscribe({ next: (b) => events.push(b.toString('utf8')), error: reject, complete: resolve }),
  );
  // The counted text, read back as the meter holds it for when no usage comes (taken first: a
  // stream without usage then counts no output in either run, and the text is compared instead).
  const text = (meter as unknown as { produced: { take(): string } }).produced.take();
  const usage = await meter.final();
  return { events, text, usage, taken };
}

/** The data of an event, parsed: for comparing events whose text the lane left escaped. */
const dataOf = (ev: string) => JSON.parse(ev.slice(ev.indexOf('data: ') + 6).trim());

/** The lane's run matches the Observable's; returns it. */
async function same(
  t: Test,
  wire: string,
  from: Dialect,
  to: Dialect,
  what: string,
  includeUsage = true,
): Promise<Run> {
  const lane = await translate(wire, from, to, true, includeUsage);
  const plain = await translate(wire, from, to, false, includeUsage);
  t.equal(plain.taken, 0, `${what}: without a lane nothing is written past the Observable`);
  t.equal(lane.events.length, plain.events.length, `${what}: as many events`);
  let escapedOnly = true;
  for (let i = 0; i < Math.min(lane.events.length, plain.events.length); i++) {
    if (lane.events[i] === plain.events[i]) continue;
    // Only a text the upstream escaped may differ, and then only in its escapes.
    if (!lane.events[i]!.includes('\\')) escapedOnly = false;
    t.same(dataOf(lane.events[i]!), dataOf(plain.events[i]!), `${what}: event ${i} is the same JSON`);
    t.equal(
      lane.events[i]!.split('\n')[0],
      plain.events[i]!.split('\n')[0],
      `${what}: event ${i} has the same framing`,
    );
  }
  t.ok(escapedOnly, `${what}: bytes differ only where the text is escaped`);
  t.equal(lane.text, plain.text, `${what}: the same text counted`);
  t.same(lane.usage, plain.usage, `${what}: the same usage`);
  return lane;
}

const fixtures = (dir: string) => {
  const d = path.join(import.meta.dirname, '..', 'fixtures', dir);
  return readdirSync(d)
    .filter((f) => f.endsWith('.sse'))
    .map((f) => [f, readFileSync(path.join(d, f), 'utf8')] as const);
};

const chunk = (content: string, tail = ',"logprobs":null,"finish_reason":null}],"usage":null}') =>
  `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}}${tail}\n\n`;
const role =
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}\n\n';
const finish =
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}\n\n';
const usage =
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9}}\n\ndata: [DONE]\n\n';
const TEXTS = [
  'Hello',
  ' world',
  '',
  'Grüße 日本語 🙂',
  'a "quoted" word',
  'back\\slash',
  'tab\tnew\nline',
  '</script>',
  'end',
];

t.test('OpenAI upstream → Messages client: recorded streams', async (t) => {
  for (const [file, wire] of fixtures('openai')) await same(t, wire, openai, anthropic, file);
});

t.test('OpenAI upstream → Messages client: the lane takes the texts after the first', async (t) => {
  const wire = role + TEXTS.map((x) => chunk(x)).join('') + finish + usage;
  const r = await same(t, wire, openai, anthropic, 'texts');
  // The first text opens the block (read in full, learned); the empty one writes nothing.
  t.equal(r.taken, TEXTS.length - 2, 'every later text with something in it was written by the lane');
  t.equal(r.text, TEXTS.join(''), 'every text counted');
});

t.test('OpenAI upstream → Messages client: state the lane must not skip', async (t) => {
  const reasoning = (x: string) =>
    chunk(x).replace(`{"content":${JSON.stringify(x)}}`, `{"reasoning_content":${JSON.stringify(x)}}`);
  const tool =
    'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}\n\n';
  // Text, then thinking (another block), then text again: the second text opens a block of its own.
  await same(
    t,
    role + chunk('a') + chunk('b') + reasoning('r1') + reasoning('r2') + chunk('c') + chunk('d') + finish + usage,
    openai,
    anthropic,
    'text, thinking, text',
  );
  // A tool call between texts closes the text block.
  await same(
    t,
    role + chunk('a') + chunk('b') + tool + chunk('c') + chunk('d') + finish + usage,
    openai,
    anthropic,
    'text, a tool call, text',
  );
  // Text after the finish reason: the answer has stopped.
  await same(
    t,
    role + chunk('a') + chunk('b') + finish + chunk('late') + chunk('later') + usage,
    openai,
    anthropic,
    'text after the stop',
  );
  // A chunk whose close differs (a finish reason beside its text) is read in full.
  await same(
    t,
    role +
      chunk('a') +
      chunk('b') +
      chunk('c', ',"logprobs":null,"finish_reason":"length"}],"usage":null}') +
      chunk('d') +
      usage,
    openai,
    anthropic,
    'a finish reason beside the text',
  );
  // An error chunk ends the stream.
  await same(
    t,
    role + chunk('a') + chunk('b') + 'data: {"error":{"message":"boom","type":"server_error"}}\n\n' + chunk('c'),
    openai,
    anthropic,
    'an error mid-stream',
  );
});

t.test('Anthropic upstream → chat client: recorded streams', async (t) => {
  for (const [file, wire] of fixtures('anthropic')) {
    await same(t, wire, anthropic, openai, file);
    await same(t, wire, anthropic, openai, `${file}, no usage asked for`, false);
  }
});

t.test('Anthropic upstream → chat client: the lane takes the texts after the first', async (t) => {
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const text = (index: number, x: string) =>
    ev('content_block_delta', { index, delta: { type: 'text_delta', text: x } });
  const start = ev('message_start', {
    message: { id: 'msg_1', model: 'up', usage: { input_tokens: 3, output_tokens: 1 } },
  });
  const open = (index: number, type = 'text') =>
    ev('content_block_start', { index, content_block: type === 'text' ? { type, text: '' } : { type, thinking: '' } });
  const stop = (index: number) => ev('content_block_stop', { index });
  const end =
    ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } }) + ev('message_stop', {});
  const r = await same(
    t,
    start + open(0) + TEXTS.map((x) => text(0, x)).join('') + stop(0) + end,
    anthropic,
    openai,
    'texts',
  );
  t.equal(r.taken, TEXTS.length - 2, 'every later text with something in it was written by the lane');
  const thinking = (index: number, x: string) =>
    ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: x } });
  await same(
    t,
    start +
      open(0, 'thinking') +
      thinking(0, 'hmm') +
      thinking(0, 'so') +
      stop(0) +
      open(1) +
      text(1, 'a') +
      text(1, 'b') +
      stop(1) +
      open(2) +
      text(2, 'c') +
      text(2, 'd') +
      stop(2) +
      end,
    anthropic,
    openai,
    'thinking, then two text blocks',
  );
  await same(
    t,
    start + open(0) + text(0, 'a') + text(0, 'b') + stop(0) + text(0, 'after its block') + end,
    anthropic,
    openai,
    'text after its block closed',
  );
});

t.test('a client dialect that gives no frame: nothing is taken', async (t) => {
  const wire = role + TEXTS.map((x) => chunk(x)).join('') + finish + usage;
  for (const [name, to] of [
    ['Responses', responses],
    ['Gemini', gemini],
  ] as const) {
    // (Responses items get ids of their own on every run: the events are counted, not compared.)
    const lane = await translate(wire, openai, to, true);
    const plain = await translate(wire, openai, to, false);
    t.equal(lane.taken, 0, `${name}: every event went down the Observable`);
    t.equal(lane.events.length, plain.events.length, `${name}: as many events`);
    t.equal(lane.text, plain.text, `${name}: the same text counted`);
  }
});

t.test('an empty text is written only where the decoder makes a delta of it and the encoder writes one', async (t) => {
  const texts: string[] = [];
  const meter = {
    noteText: (s: string) => texts.push(s),
    noteRaw: () => {},
    noteTextBytes: (raw: Buffer, s: number, e: number) => texts.push(raw.toString('utf8', s, e)),
  };
  const lane = new TextLane(meter);
  const delta = (x: string) =>
    `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(x)}}}\n\n`;
  const envelope = new Envelope();
  const read: SSEEvent[] = [];
  new SSEDecoder().push(Buffer.from(delta('first')), { event: (ev) => read.push(ev) });
  envelope.learn(read[0]!);
  lane.envelope = envelope;
  lane.block = 0;
  const frame = frameOf(0, true, (x) => Buffer.from(`data: {"t":${JSON.stringify(x)}}\n\n`));
  lane.frame = frame;
  t.equal(lane.take(Buffer.from(delta('')))!.length, 0, 'a decoder that makes nothing of it: nothing written');
  lane.emptyDeltas = true;
  t.equal(
    lane.take(Buffer.from(delta('')))!.toString(),
    'data: {"t":""}\n\n',
    'both make something of it: an empty delta written',
  );
  lane.frame = { ...frame, writesEmpty: false };
  t.equal(lane.take(Buffer.from(delta('')))!.length, 0, 'an encoder that skips it: nothing written');
  t.equal(lane.take(Buffer.from(delta('x')))!.toString(), 'data: {"t":"x"}\n\n', 'a text is framed');
  lane.frame = { ...frame, block: 1 };
  t.equal(lane.take(Buffer.from(delta('x'))), undefined, 'a frame for another block: not taken');
  t.equal(texts.join(''), 'x', 'only the framed texts counted');
});
