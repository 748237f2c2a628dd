// A chat stream read through its envelope (src/stream/envelope.ts) must come out exactly as if
// every event had been read in full: passed through, the same bytes to the client, the same text
// counted, the same usage and the same failure; translated, the same IR events. Each case runs one tap over a whole stream and compares it
// with a fresh tap per event (a fresh envelope knows nothing, so every event is read in full).
import t, { type Test } from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { from, lastValueFrom, toArray } from 'rxjs';
import path from 'node:path';
import { ChatPassThrough } from '../../src/dialects/openai/upstream.js';
import { MessagesPassThrough } from '../../src/dialects/anthropic/upstream.js';
import type { EventTap } from '../../src/stream/pass-through.js';
import { openai } from '../../src/dialects/openai/index.js';
import { anthropic } from '../../src/dialects/anthropic/index.js';
import type { IRStreamEvent } from '../../src/dialects/ir.js';
import type { Dialect, UsageSink } from '../../src/dialects/dialect.js';
import { parsedText } from '../../src/inference/meter.js';
import { deltaText } from '../../src/stream/delta-text.js';
import { releaseScratch } from '../../src/stream/scratch.js';
import { SSEDecoder, type SSEEvent } from '../../src/stream/sse.js';
import { parseSSE } from '../helpers/sse.js';

/** What a tap reported, as the stream meter would read it. */
class Recorder implements UsageSink {
  texts: string[] = [];
  usage: unknown[] = [];
  failed = false;
  noteUsage(u: unknown) {
    this.usage.push(u);
  }
  noteRaw(data: string) {
    const text = deltaText(data);
    if (text !== undefined) this.texts.push(text);
    else parsedText(data, { append: (s) => this.texts.push(s) });
  }
  noteText(text: string) {
    this.texts.push(text);
  }
  /** Texts that came as bytes: events the envelope fitted with no escapes in their text. */
  asBytes = 0;
  noteTextBytes(raw: Buffer, start: number, end: number) {
    this.asBytes++;
    this.texts.push(raw.toString('utf8', start, end));
  }
}

function eventsOf(wire: string): SSEEvent[] {
  const out: SSEEvent[] = [];
  const decoder = new SSEDecoder();
  decoder.push(Buffer.from(wire), { event: (ev) => out.push(ev) });
  decoder.flush({ event: (ev) => out.push(ev) });
  return out;
}

interface Run {
  bytes: string[];
  text: string;
  usage: unknown[];
  failed: boolean;
  /** Events the tap took as bytes, never decoded. */
  asBytes: number;
  /** Of those, texts the meter was given as bytes (no escapes in them). */
  textBytes: number;
}

/**
 * One tap over the whole stream as a pass-through stream reads it (the decoder offers each
 * event's bytes to the tap first), or (`fresh`) a new tap for each event, read in full.
 */
function runTap(wire: string, open: (sink: Recorder) => EventTap, fresh: boolean): Run {
  const sink = new Recorder();
  const bytes: string[] = [];
  let asBytes = 0;
  const sent = (out: Buffer | null) => {
    bytes.push(out === null ? '(dropped)' : out.toString('utf8'));
    releaseScratch();
  };
  if (fresh) for (const ev of eventsOf(wire)) sent(open(sink).event(ev));
  else {
    const tap = open(sink);
    const reader = {
      raw(raw: Buffer) {
        const out = tap.raw!(raw);
        if (out === undefined) return false;
        asBytes++;
        sent(out);
        return true;
      },
      event: (ev: SSEEvent) => sent(tap.event(ev)),
    };
    const decoder = new SSEDecoder();
    decoder.push(Buffer.from(wire), reader);
    decoder.flush(reader);
  }
  return { bytes, text: sink.texts.join(''), usage: sink.usage, failed: sink.failed, asBytes, textBytes: sink.asBytes };
}

const run = (wire: string, model: string, fresh: boolean) =>
  runTap(wire, (sink) => new ChatPassThrough(sink, true, model), fresh);

/** The envelope's run equals the full reading's; returns the run. */
function same(t: Test, wire: string, model: string, what: string): Run {
  const through = run(wire, model, false);
  t.same({ ...through, asBytes: 0, textBytes: 0 }, run(wire, model, true), what);
  return through;
}

const chunk = (content: string, opts: { model?: string; tail?: string; role?: boolean } = {}) => {
  const delta = opts.role
    ? `{"role":"assistant","content":${JSON.stringify(content)}}`
    : `{"content":${JSON.stringify(content)}}`;
  return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":${JSON.stringify(opts.model ?? 'up-model')},"choices":[{"index":0,"delta":${delta}${opts.tail ?? ',"logprobs":null,"finish_reason":null}],"usage":null}'}\n\n`;
};

t.test('recorded OpenAI streams read the same through the envelope', async (t) => {
  const dir = path.join(import.meta.dirname, '..', 'fixtures', 'openai');
  for (const file of [
    'stream_text_include_usage.sse',
    'stream_text_usage_null_obfuscation.sse',
    'stream_refusal.sse',
    'stream_parallel_tool_calls_include_usage.sse',
    'stream_tool_call_in_role_chunk.sse',
    'stream_azure_prompt_filter_first_chunk.sse',
  ]) {
    const wire = readFileSync(path.join(dir, file), 'utf8');
    const r = same(t, wire, 'catalogue-model', file);
    t.ok(
      r.bytes.some((b) => b.includes('"model":"catalogue-model"')),
      `${file}: renamed`,
    );
  }
});

t.test('text of every kind, renamed or not, reads the same', async (t) => {
  const texts = [
    'Hello',
    ' world',
    '',
    'Grüße 日本語 🙂',
    'a "quoted" word',
    'back\\slash\\',
    'tab\tnew\nline',
    '\u0000\u001f',
    '"usage":{"prompt_tokens":1}',
    '\\"',
    'end',
  ];
  for (const model of [
    'up-model',
    'catalogue-model',
    'a-much-longer-catalogue-model-name-than-the-upstream-one',
    'm',
  ]) {
    const wire = chunk('', { role: true }) + texts.map((x) => chunk(x)).join('') + 'data: [DONE]\n\n';
    const r = same(t, wire, model, `model ${model}`);
    t.equal(r.text, texts.join(''), `model ${model}: every text counted`);
    // The role chunk and the first text are read in full (each learned); the other texts,
    // escaped or not, are known by their bytes, and those without escapes reach the meter so.
    t.equal(r.asBytes, texts.length - 1, `model ${model}: the texts after the first taken as bytes`);
    t.equal(r.textBytes, 4, `model ${model}: the unescaped ones counted from their bytes`);
    t.equal(
      r.bytes.filter((b) => b.includes(`"model":${JSON.stringify(model)}`)).length,
      texts.length + 1,
      `model ${model}: every chunk names it`,
    );
  }
});

t.test('a chunk that opens as the last one did but closes otherwise is read in full', async (t) => {
  // Closes of one length, the second with a usage object: only comparing the closes tells the
  // second chunk from the learned one (its text ends where the learned text did).
  const usageClose = ',"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}';
  const start = ',"logprobs":null,"finish_reason":null}],"usage":null,"x":"';
  const plainClose = start + 'p'.repeat(usageClose.length - start.length - 2) + '"}';
  t.equal(plainClose.length, usageClose.length);
  const r = same(
    t,
    chunk('one', { tail: plainClose }) + chunk('two', { tail: usageClose }) + 'data: [DONE]\n\n',
    'catalogue-model',
    'usage in a close of the same length',
  );
  t.match(r.usage.filter(Boolean), [{ input: 3, output: 2 }], 'the usage is read');
  // A chunk with usage is read for its usage alone: its counts make the text's count moot.
  t.equal(r.text, 'one');
  const errorClose = ',"logprobs":null,"finish_reason":null}],"error":{"message":"boom!"}}';
  const quietClose = start + 'p'.repeat(errorClose.length - start.length - 2) + '"}';
  const e = same(
    t,
    chunk('one', { tail: quietClose }) + chunk('two', { tail: errorClose }),
    'catalogue-model',
    'an error in a close of the same length',
  );
  t.equal(e.failed, true, 'the error is seen');
});

t.test('events the envelope does not learn from, or must not fit', async (t) => {
  const cases: [string, string][] = [
    [
      'the model after the text',
      'data: {"choices":[{"index":0,"delta":{"content":"a"}}],"model":"up"}\n\ndata: {"choices":[{"index":0,"delta":{"content":"b"}}],"model":"up"}\n\n',
    ],
    [
      'no model',
      'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\ndata: {"choices":[{"index":0,"delta":{"content":"b"}}]}\n\n',
    ],
    ['an event line', `event: chunk\n${chunk('a')}event: chunk\n${chunk('b')}`],
    ['CRLF framing', chunk('a').replace(/\n/g, '\r\n') + chunk('b').replace(/\n/g, '\r\n')],
    ['no space after data:', chunk('a').replace('data: ', 'data:') + chunk('b').replace('data: ', 'data:')],
    ['a learned chunk, then the same without its space', chunk('a') + chunk('b').replace('data: ', 'data:')],
    [
      'two choices',
      chunk('a') +
        chunk('b', {
          tail: '},"finish_reason":null},{"index":1,"delta":{"content":"c"},"finish_reason":null}],"usage":null}',
        }),
    ],
    ['a bad escape', chunk('a') + chunk('b').replace('"b"', '"\\x"')],
    ['an unescaped quote in the text', chunk('a') + chunk('b').replace('"b"', '"b"c"')],
    ['another key between the text and the close', chunk('a') + chunk('b').replace('"b"', '"b","refusal":"no"')],
    ['a non-ASCII chunk learned from', chunk('ä') + chunk('b') + chunk('c')],
    [
      'a non-ASCII id before the model',
      chunk('a').replace('chatcmpl-1', 'chatcmpl-ä') + chunk('b').replace('chatcmpl-1', 'chatcmpl-ä'),
    ],
    [
      'text on two data lines',
      chunk('a').replace('"a"', '"a",\ndata: "x":1') + chunk('b').replace('"b"', '"b",\ndata: "x":1'),
    ],
    [
      'tool calls between texts',
      chunk('a') +
        'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}],"usage":null}\n\n' +
        chunk('b'),
    ],
  ];
  for (const [what, wire] of cases) same(t, wire, 'catalogue-model', what);
});

// A translated stream's decoder (dialects/openai/stream-decode.ts) reads a chunk that fits
// its envelope without parsing it. The reference is the same stream with a key of its own at the
// front of every chunk, which no envelope fits, so every chunk is parsed; the decoder reads no
// such key, so the IR must be the same.
async function decodeBoth(t: Test, wire: string, what: string, dialect: Dialect = openai): Promise<IRStreamEvent[]> {
  let n = 0;
  const reference = wire.replace(/^data: \{/gm, () => `data: {"_n":${n++},`);
  t.ok(n > 1, `${what}: the reference differs`);
  const decode = (w: string) =>
    lastValueFrom(from([Buffer.from(w)]).pipe(parseSSE(), dialect.decodeStream(), toArray()));
  const got = await decode(wire);
  t.same(got, await decode(reference), what);
  return got;
}

t.test('a translated stream decodes the same through the envelope', async (t) => {
  const dir = path.join(import.meta.dirname, '..', 'fixtures', 'openai');
  for (const file of [
    'stream_text_include_usage.sse',
    'stream_text_usage_null_obfuscation.sse',
    'stream_refusal.sse',
    'stream_parallel_tool_calls_include_usage.sse',
    'stream_tool_call_in_role_chunk.sse',
    'stream_azure_prompt_filter_first_chunk.sse',
  ]) {
    await decodeBoth(t, readFileSync(path.join(dir, file), 'utf8'), file);
  }
  const finish =
    'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}\n\n';
  const usage =
    'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\n';
  const texts = ['Hello', '', ' wörld 🙂', 'a "quote"', 'back\\slash', '', 'end'];
  const events = await decodeBoth(
    t,
    chunk('', { role: true }) + texts.map((x) => chunk(x)).join('') + finish + usage + 'data: [DONE]\n\n',
    'texts, empty ones among them',
  );
  const deltas = events.flatMap((e) => (e.type === 'delta' && e.delta.type === 'text' ? [e.delta.text] : []));
  t.same(
    deltas,
    texts.filter((x) => x !== ''),
    'one delta per text, none for an empty one',
  );
  await decodeBoth(
    t,
    chunk('a') +
      chunk('b') +
      finish.replace('"usage":null', '"usage":{"prompt_tokens":3,"completion_tokens":2}') +
      chunk('c') +
      chunk('d') +
      'data: [DONE]\n\n',
    'text after the answer stopped',
  );
  await decodeBoth(
    t,
    chunk('a') +
      chunk('b', { tail: ',"logprobs":null,"finish_reason":null}],"usage":null,"error":{"message":"no"}}' }) +
      chunk('c'),
    'an error in the close',
  );
  await decodeBoth(
    t,
    chunk('a') +
      chunk('b').replace('"index":0', '"index":1') +
      chunk('c').replace('"index":0', '"index":1') +
      chunk('d') +
      finish +
      'data: [DONE]\n\n',
    'a second choice',
  );
  await decodeBoth(
    t,
    chunk('a') +
      chunk('b').replace('{"content":"b"}', '{"content":"b","reasoning_content":"r"}') +
      chunk('c') +
      finish +
      'data: [DONE]\n\n',
    'reasoning beside the text',
  );
  const finishing = (x: string) => chunk(x, { tail: ',"logprobs":null,"finish_reason":"length"}],"usage":null}' });
  await decodeBoth(
    t,
    chunk('a') + finishing('b') + finishing('c') + finishing('d') + 'data: [DONE]\n\n',
    'text beside a finish reason, repeated',
  );
  const firstOfTwo = (x: string) =>
    `data: {"id":"chatcmpl-1","choices":[{"index":1,"delta":{"content":${JSON.stringify(x)}}},{"index":0,"delta":{"role":"assistant"}}]}\n\n`;
  await decodeBoth(
    t,
    chunk('a') + firstOfTwo('b') + firstOfTwo('c') + firstOfTwo('d') + finish + 'data: [DONE]\n\n',
    'two choices, the text in the second',
  );
  const deltaElsewhere = (x: string) =>
    `data: {"id":"chatcmpl-1","choices":[{"index":0}],"x":{"delta":{"content":${JSON.stringify(x)}}}}\n\n`;
  await decodeBoth(
    t,
    chunk('a') + deltaElsewhere('b') + deltaElsewhere('c') + deltaElsewhere('d') + finish + 'data: [DONE]\n\n',
    'a delta outside the choice',
  );
});

// Messages pass-through reads only text deltas' text.
const runMessages = (wire: string, fresh: boolean) =>
  runTap(wire, (sink) => new MessagesPassThrough(sink, 'catalogue-model'), fresh);

t.test('a Messages stream reads the same through the envelope', async (t) => {
  const dir = path.join(import.meta.dirname, '..', 'fixtures', 'anthropic');
  const files = readdirSync(dir).filter((f) => f.endsWith('.sse'));
  t.ok(files.length >= 3, 'recorded streams found');
  for (const file of files) {
    const wire = readFileSync(path.join(dir, file), 'utf8');
    t.same({ ...runMessages(wire, false), asBytes: 0, textBytes: 0 }, runMessages(wire, true), file);
  }
  const delta = (text: string, type = 'text_delta', field = 'text') =>
    `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"${type}","${field}":${JSON.stringify(text)}}}\n\n`;
  const texts = ['Hi', '', ' wörld 🙂', 'a "quote"', 'back\\slash\\', 'end'];
  const wire =
    texts.map((x) => delta(x)).join('') +
    delta('{"a":', 'input_json_delta', 'partial_json') +
    delta('1}', 'input_json_delta', 'partial_json') +
    delta('again') +
    delta('and again').replace('"index":0', '"index":1') +
    delta('crlf').replace(/\n/g, '\r\n');
  const through = runMessages(wire, false);
  t.same({ ...through, asBytes: 0, textBytes: 0 }, runMessages(wire, true), 'texts, tool input, another block, CRLF');
  t.ok(through.asBytes >= texts.length - 1, 'the texts after the first taken as bytes');
  t.equal(through.text, texts.join('') + '{"a":1}againand againcrlf', 'every piece counted');
});

// A translated stream from an Anthropic upstream: its decoder reads a text delta that fits its
// envelope without parsing it. The same reference: a key of its own at the front of each event.
const decodeMessagesBoth = (t: Test, wire: string, what: string) => decodeBoth(t, wire, what, anthropic);

t.test('a translated Messages stream decodes the same through the envelope', async (t) => {
  const dir = path.join(import.meta.dirname, '..', 'fixtures', 'anthropic');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sse')))
    await decodeMessagesBoth(t, readFileSync(path.join(dir, file), 'utf8'), file);
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const text = (index: number, x: string) =>
    ev('content_block_delta', { index, delta: { type: 'text_delta', text: x } });
  const start = ev('message_start', {
    message: { id: 'msg_1', model: 'up', usage: { input_tokens: 3, output_tokens: 1 } },
  });
  const open = (index: number) => ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
  const stop = (index: number) => ev('content_block_stop', { index });
  const end =
    ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } }) + ev('message_stop', {});
  const texts = ['Hi', '', ' wörld 🙂', 'a "quote"', 'back\\slash\\', 'end'];
  const got = await decodeMessagesBoth(
    t,
    start + open(0) + texts.map((x) => text(0, x)).join('') + stop(0) + end,
    'texts in one block',
  );
  t.same(
    got.flatMap((e) => (e.type === 'delta' && e.delta.type === 'text' ? [e.delta.text] : [])),
    texts,
    'every text, an empty one too',
  );
  await decodeMessagesBoth(
    t,
    start + open(0) + text(0, 'a') + text(0, 'b') + stop(0) + text(0, 'late') + text(0, 'later') + end,
    'text after its block closed',
  );
  await decodeMessagesBoth(
    t,
    start + text(0, 'a') + text(0, 'b') + open(0) + text(0, 'c') + text(0, 'd') + stop(0) + end,
    'text before its block opened',
  );
  await decodeMessagesBoth(
    t,
    start + open(0) + text(0, 'a') + text(0, 'b') + stop(0) + open(1) + text(1, 'c') + text(1, 'd') + stop(1) + end,
    'two blocks',
  );
});
