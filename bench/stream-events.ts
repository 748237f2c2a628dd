// The gateway's own work per streamed event, alone in one process: SSE reading, the pass-through
// taps (usage, text for the meter, the model's rename) and translated streams' decode, meter and
// encode (both ways, and into the Responses and Gemini surfaces), over 1,000 streams of 40
// recorded-shape chunks taken in turn. Each path runs twice: as it is, and with every chunk read
// in full (a key of its own at the front of each chunk, which no envelope fits:
// src/stream/envelope.ts), so one run shows what the envelope saves on this machine, whatever
// else it is doing at the time.
//
//   node --import tsx bench/stream-events.ts [events]

import { Subject } from 'rxjs';
import { MessagesPassThrough } from '../src/dialects/anthropic/upstream.js';
import { anthropic } from '../src/dialects/anthropic/index.js';
import type { Dialect } from '../src/dialects/dialect.js';
import { openai } from '../src/dialects/openai/index.js';
import { ChatPassThrough } from '../src/dialects/openai/upstream.js';
import { gemini } from '../src/dialects/gemini/index.js';
import { responses } from '../src/dialects/responses/index.js';
import { meterIR, StreamMeter } from '../src/inference/meter.js';
import { releaseScratch } from '../src/stream/scratch.js';
import type { EventTap } from '../src/stream/pass-through.js';
import { SSEDecoder, type SSEEvent } from '../src/stream/sse.js';
import { TextLane } from '../src/stream/text-lane.js';

const EVENTS = Number(process.argv[2] ?? 2_000_000);
const STREAMS = 1000;
const PER_STREAM = 40;
const WORDS = ['Hello', ' world', ',', ' this', ' is', ' a', ' token', ' stream', '.', ' Grüße 🙂'];

const chat = (text: string, n: number | undefined) =>
  `data: {${n === undefined ? '' : `"_n":${n},`}"id":"chatcmpl-abc123def456","object":"chat.completion.chunk","created":1764000000,"model":"bench-upstream","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":{"content":${JSON.stringify(text)}},"logprobs":null,"finish_reason":null}],"usage":null}\n\n`;
const messages = (text: string, n: number | undefined) =>
  `event: content_block_delta\ndata: {${n === undefined ? '' : `"_n":${n},`}"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(text)}}}\n\n`;

/** Each event's bytes as a socket read gives them: a fresh buffer per read. */
function reads(wire: (text: string, n: number | undefined) => string, full: boolean): Buffer[] {
  return Array.from({ length: 1000 }, (_, i) => Buffer.from(wire(WORDS[i % WORDS.length]!, full ? i : undefined)));
}

const meter = () => new StreamMeter({ body: '{}', dialect: openai, maxImageTokens: 0 });
let sink = 0;

/** One path: `open` makes a stream's reader, which takes one read at a time. */
function measure(open: () => (read: Buffer) => void, source: Buffer[]): number {
  const streams = Array.from({ length: STREAMS }, open);
  let opened = 0;
  const run = (n: number) => {
    for (let i = 0; i < n; i++) {
      const s = i % STREAMS;
      // A stream's 40 chunks done, the next stream takes its place.
      if (i > 0 && s === 0 && (i / STREAMS) % PER_STREAM === 0)
        for (let k = 0; k < STREAMS; k++, opened++) streams[k] = open();
      // Each stream's next read is another chunk (another key, in the full reading).
      const src = source[(i + Math.floor(i / STREAMS)) % source.length]!;
      const read = Buffer.allocUnsafe(src.length);
      src.copy(read);
      streams[s]!(read);
    }
  };
  run(EVENTS / 10);
  const start = process.cpuUsage();
  run(EVENTS);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / EVENTS;
}

/** A pass-through stream's reading, as stream/pass-through.ts does it: bytes first, then the event. */
function passThrough(tap: () => EventTap) {
  return () => {
    const decoder = new SSEDecoder();
    const t = tap();
    const sent = (out: Buffer | null | undefined) => {
      if (out) sink += out.length;
      releaseScratch();
    };
    const target = {
      raw(raw: Buffer) {
        const out = t.raw?.(raw);
        if (out === undefined) return false;
        sent(out);
        return true;
      },
      event: (ev: SSEEvent) => sent(t.event(ev)),
    };
    return (read: Buffer) => decoder.push(read, target);
  };
}

/**
 * A translated stream: `upstream`'s events decoded, metered and encoded for `client`, with the
 * text lane as inference/handle.ts sets it up (events it takes skip the Observable).
 */
function translated(upstream: Dialect, client: Dialect, preamble = '') {
  return () => {
    const decoder = new SSEDecoder();
    const events = new Subject<SSEEvent>();
    const ctx = { id: 'msg_bench', model: 'bench-model', created: 0, includeUsage: false, requestId: 'req_bench' };
    const m = meter();
    const lane = new TextLane(m);
    events
      .pipe(upstream.decodeStream(lane), meterIR(m), client.encodeStream(ctx, lane))
      .subscribe((b) => (sink += b.length));
    const target = {
      raw(raw: Buffer) {
        const out = lane.take(raw);
        if (out === undefined) return false;
        sink += out.length;
        releaseScratch();
        return true;
      },
      event: (ev: SSEEvent) => events.next(ev),
    };
    if (preamble !== '') decoder.push(Buffer.from(preamble), target);
    return (read: Buffer) => decoder.push(read, target);
  };
}

/** What opens a Messages stream's first text block, before its deltas. */
const MESSAGES_OPEN =
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"bench-upstream","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}\n\n' +
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n';

const paths: [string, () => (read: Buffer) => void, (text: string, n: number | undefined) => string][] = [
  ['chat pass-through', passThrough(() => new ChatPassThrough(meter(), false, 'bench-model')), chat],
  ['Messages pass-through', passThrough(() => new MessagesPassThrough(meter(), 'bench-model')), messages],
  ['OpenAI upstream → Messages client', translated(openai, anthropic), chat],
  ['Anthropic upstream → chat client', translated(anthropic, openai, MESSAGES_OPEN), messages],
  ['Anthropic upstream → Responses client', translated(anthropic, responses, MESSAGES_OPEN), messages],
  ['OpenAI upstream → Gemini client', translated(openai, gemini), chat],
];

console.log(
  `${EVENTS.toLocaleString('en-US')} events a path, ${STREAMS} streams of ${PER_STREAM} taken in turn; CPU ns an event (Node ${process.version})`,
);
console.log('path'.padEnd(40), 'as it is'.padStart(10), 'read in full'.padStart(14));
for (const [name, open, wire] of paths) {
  const fast = measure(open, reads(wire, false));
  const full = measure(open, reads(wire, true));
  console.log(name.padEnd(40), fast.toFixed(0).padStart(10), full.toFixed(0).padStart(14));
}
if (sink === 0) throw new Error('nothing was produced');
