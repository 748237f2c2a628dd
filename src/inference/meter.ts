// What a streamed answer used, gathered as the stream passes. Usage reported by the upstream
// is authoritative; when none came (client abort, upstream failure), the tokens produced so
// far are counted with the tokenizer.

import { map, type OperatorFunction } from 'rxjs';
import type { UsageSink } from '../dialects/dialect.js';
import type { IRStreamEvent, IRUsage } from '../dialects/ir.js';
import { forwardedTokens, type Forwarded } from '../billing/prompt-size.js';
import { countTextTokens } from '../billing/tokens.js';
import { deltaText } from '../stream/delta-text.js';
import { copyBytes } from '../stream/scratch.js';

const TEXT_LIMIT = 256 * 1024;

/**
 * Text held as UTF-8 bytes in one buffer outside the JS heap. Held as strings, a paced stream's
 * per-token pieces live for seconds: long enough to be promoted, then to die as old-space
 * garbage, which at 10,000 open streams grew the workers' heaps by hundreds of MB between
 * major collections.
 */
class ByteLog {
  private buf?: Buffer;
  bytes = 0;

  append(s: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: an upper bound, with no pass over the text.
    // Only when that bound does not fit is the text measured, so the buffer grows no larger.
    const capacity = this.buf ? this.buf.length : 0;
    let need = this.bytes + s.length * 3;
    if (need > capacity) need = this.bytes + Buffer.byteLength(s);
    const buf = !this.buf || need > capacity ? this.grow(need) : this.buf;
    this.bytes += buf.write(s, this.bytes);
  }

  /** Bytes [start, end) of `raw`, UTF-8 text. */
  appendBytes(raw: Buffer, start: number, end: number): void {
    const need = this.bytes + end - start;
    const buf = !this.buf || need > this.buf.length ? this.grow(need) : this.buf;
    this.bytes = copyBytes(raw, start, end, buf, this.bytes);
  }

  /** The buffer, with room for `need` bytes in all. */
  private grow(need: number): Buffer {
    let size = this.buf ? this.buf.length : 256;
    while (size < need) size *= 2;
    // Slow: a slice of the shared pool would keep a whole pool chunk alive with it.
    const next = Buffer.allocUnsafeSlow(size);
    this.buf?.copy(next, 0, 0, this.bytes);
    this.buf = next;
    return next;
  }

  /** The text so far; the log starts again empty. */
  take(): string {
    const text = this.buf ? this.buf.toString('utf8', 0, this.bytes) : '';
    this.bytes = 0;
    this.buf = undefined;
    return text;
  }
}

/** What a stream used; a pass-through stream's dialect tap (dialects/…/upstream.ts) reports to it. */
export class StreamMeter implements UsageSink {
  private usage: Partial<IRUsage> = {};
  /** The body sent upstream, for counting its tokens if the upstream never says: let go once it does. */
  private request?: Forwarded;
  private outputReported = false;
  /** Text produced so far, only needed if no usage arrives. */
  private readonly produced = new ByteLog();
  /** Tokens of text already counted and released. */
  private counted: Promise<number> = Promise.resolve(0);
  /**
   * The upstream reported an error inside the stream (OpenAI's `{"error":…}` chunk, Anthropic's
   * `event: error`). The stream still completes normally on the wire, so without this the
   * usage record would call a failed answer a 200.
   */
  failed = false;
  /** The whole answer, where the upstream's last event carries it (kept for continuations). */
  answer?: Record<string, unknown>;

  constructor(request: Forwarded) {
    this.request = request;
  }

  noteUsage(u: Partial<IRUsage> | null | undefined) {
    if (!u) return;
    if (u.output !== undefined) this.outputReported = true;
    // Reported counts are kept, never unset: once the input is known the request is not needed.
    for (const [k, v] of Object.entries(u)) if (v !== undefined) (this.usage as Record<string, number>)[k] = v;
    if (this.usage.input !== undefined) this.request = undefined;
  }

  noteAnswer(answer: Record<string, unknown>) {
    this.answer = answer;
  }

  noteText(text: string) {
    if (this.outputReported) return;
    this.produced.append(text);
    if (this.produced.bytes > TEXT_LIMIT) this.countAndRelease();
  }

  noteTextBytes(raw: Buffer, start: number, end: number) {
    if (this.outputReported) return;
    this.produced.appendBytes(raw, start, end);
    if (this.produced.bytes > TEXT_LIMIT) this.countAndRelease();
  }

  /** Keeps a long answer's memory bounded: its text so far becomes a token count. */
  private countAndRelease() {
    const text = this.produced.take();
    const before = this.counted;
    this.counted = before.then(async (n) => n + (await countTextTokens([text])));
  }

  /**
   * A pass-through event's data: its text is taken out at once. Holding the raw events to parse
   * only if no usage came saved nothing: usage comes last, so all but the last few events were
   * parsed anyway, and the held bytes cost every open stream a buffer of its own.
   */
  noteRaw(data: string) {
    if (this.outputReported) return;
    const text = deltaText(data);
    if (text !== undefined) this.produced.append(text);
    else parsedText(data, this.produced);
    if (this.produced.bytes > TEXT_LIMIT) this.countAndRelease();
  }

  /** Final usage: reported counts, with gaps filled by counting what we saw. */
  async final(): Promise<IRUsage> {
    const u = this.usage;
    const input = u.input ?? (await forwardedTokens(this.request!));
    let output = u.output;
    if (output === undefined || !this.outputReported) {
      output = (await this.counted) + (await countTextTokens([this.produced.take()]));
    }
    return { input, output, cacheRead: u.cacheRead ?? 0, cacheWrite: u.cacheWrite ?? 0 };
  }

  /** What the meter holds of the answer, in bytes (for the bounded-memory tests). */
  get heldBytes(): number {
    return this.produced.bytes;
  }
}

/** Text of an OpenAI chunk (every choice of it) or an Anthropic content_block_delta, for counting. */
export function parsedText(data: string, out: { append(s: string): void }): void {
  let json: any;
  try {
    json = JSON.parse(data);
  } catch {
    return;
  }
  if (Array.isArray(json?.choices)) {
    for (const choice of json.choices) {
      const delta = choice?.delta;
      if (!delta) continue;
      if (typeof delta.content === 'string') out.append(delta.content);
      if (typeof delta.reasoning_content === 'string') out.append(delta.reasoning_content);
      if (typeof delta.refusal === 'string') out.append(delta.refusal);
      for (const tc of delta.tool_calls ?? []) {
        if (typeof tc?.function?.name === 'string') out.append(tc.function.name);
        if (typeof tc?.function?.arguments === 'string') out.append(tc.function.arguments);
      }
    }
    return;
  }
  const d = json?.delta;
  if (!d) return;
  if (typeof d.text === 'string') out.append(d.text);
  if (typeof d.thinking === 'string') out.append(d.thinking);
  if (typeof d.partial_json === 'string') out.append(d.partial_json);
}

/** Translated streams: usage and produced text come from the IR events. */
export function meterIR(meter: StreamMeter): OperatorFunction<IRStreamEvent, IRStreamEvent> {
  return map((ev) => {
    if (ev.type === 'start' || ev.type === 'stop') {
      const u = ev.usage ? { ...ev.usage } : undefined;
      if (u && ev.type === 'start') delete u.output;
      meter.noteUsage(u);
    } else if (ev.type === 'error') {
      meter.failed = true;
    } else if (ev.type === 'delta') {
      const d = ev.delta;
      meter.noteText(
        d.type === 'text' ? d.text : d.type === 'thinking' ? d.thinking : d.type === 'input_json' ? d.partialJson : '',
      );
    }
    return ev;
  });
}
