// A stream's text events repeat one envelope around their text: an OpenAI chunk's id, created,
// model and fingerprint before its delta, its index, finish reason and usage after; an
// Anthropic text delta's event line, type and index. Once an event has been read in full
// (usage, error and text looked for, the model found), the next one whose bytes open and close
// with the same bytes is that event with other text, and everything the full reading found
// holds for it: no usage or error key can hide in the text, which has no unescaped quote, and
// the text has no line break, so the SSE framing is the learned event's too.
//
// The comparison is made on the event's bytes, before any decoding: a same-dialect stream's
// text events go from the socket to the client without becoming strings, and the envelope is
// kept as two flat strings of its bytes (latin1: one character a byte), which V8 compares as
// memory. Compared as slices of the decoded event, one side was a sliced string and every
// comparison went through the runtime.

import { deltaSpan, EMPTY_DELTA, TEXT, textStringEnd, unescaped, type Span } from './delta-text.js';
import type { ModelName } from './json-bytes.js';
import { spliced } from './scratch.js';
import type { SSEEvent } from './sse.js';

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const span: Span = { start: 0, end: 0 };

/** Where an event's text goes (the stream's meter): counted if no usage comes. */
export interface TextSink {
  /** Produced text, for a dialect whose events the meter cannot read itself. */
  noteText(text: string): void;
  /** An event's data, for the text the meter parses out of it (an OpenAI chunk, an Anthropic delta). */
  noteRaw(data: string): void;
  /** The same as UTF-8 bytes [start, end) of `raw` (copied before it returns): no string made. */
  noteTextBytes?(raw: Buffer, start: number, end: number): void;
}

/** The last event of one stream that was read in full, cut around its text. */
export class Envelope {
  /** The event's bytes up to its text's opening quote included; '' until an event is learned. */
  private head = '';
  /** Its bytes from the text's closing quote to its end (the blank line included). */
  private tail = '';
  /** Where the model's name lies in those bytes, to be replaced; -1 when it names the right one. */
  private modelStart = -1;
  private modelEnd = -1;
  /** The text of the event match() last accepted has escapes (`\n`, `\"`, `\u00e9`). */
  private escaped = false;

  /**
   * Where the text of `raw` ends (its closing quote) if `raw` is the learned event with other
   * text, the text starting where the learned one's did; -1 otherwise, and the event
   * must be read in full.
   */
  match(raw: Buffer): number {
    const head = this.head;
    if (head === '') return -1;
    const length = raw.length;
    const end = length - this.tail.length;
    const start = head.length;
    if (end < start) return -1;
    if (raw.toString('latin1', end, length) !== this.tail || raw.toString('latin1', 0, start) !== head) return -1;
    // The text is one JSON string's content: an escape takes the byte after it, and a quote or
    // a control byte (a line break among them) not escaped means it is not.
    let escaped = false;
    let i = start;
    for (; i < end; i++) {
      const b = raw[i]!;
      if (b === BACKSLASH) {
        escaped = true;
        i++;
      } else if (b === QUOTE || b < 0x20) return -1;
    }
    // An escape that took the tail's quote: that quote is text, and the string goes on.
    if (i !== end) return -1;
    this.escaped = escaped;
    return end;
  }

  /** Where a fitting event's text starts in its bytes. */
  get textStart(): number {
    return this.head.length;
  }

  /** An event has been learned: match() may fit the next one. */
  get learned(): boolean {
    return this.head !== '';
  }

  /** The text of the event match() just accepted, as a string; undefined if its escapes are not JSON's. */
  textOf(raw: Buffer, end: number): string | undefined {
    const text = raw.toString('utf8', this.head.length, end);
    return this.escaped ? unescaped(text) : text;
  }

  /**
   * Hands the text of the event match() just accepted to `sink`: as its bytes where they are the
   * text (no escapes), so that a token goes from the socket read to the meter's log without
   * becoming a string.
   */
  noteMatched(sink: TextSink, raw: Buffer, end: number): void {
    if (!this.escaped && sink.noteTextBytes) sink.noteTextBytes(raw, this.head.length, end);
    else {
      const text = this.textOf(raw, end);
      if (text !== undefined) sink.noteText(text);
    }
  }

  /** The text of `ev`, if it is the learned event with other text; undefined otherwise. */
  text(ev: SSEEvent): string | undefined {
    const end = this.match(ev.raw);
    return end === -1 ? undefined : this.textOf(ev.raw, end);
  }

  /** What goes to the client for an event match() accepted: its bytes, naming the model learned for. */
  send(raw: Buffer, name: ModelName): Buffer {
    return this.modelStart === -1 ? raw : spliced(raw, this.modelStart, this.modelEnd, name.bytes);
  }

  /**
   * An event read in full and found to carry neither usage nor an error: its text noted as the
   * meter would read it (sink.noteRaw parses what is not of the common shape), and the event
   * learned if its text has the common shape (delta-text.ts) and it is one `data:` line, after
   * at most one `event:` line, ending in a blank line: then its data is the bytes before that
   * blank line, and the text's place in them is known. With `name` (for send()), the model's
   * name (the first, as eventWithModel renames it) must come before the text, and is found in
   * the learned bytes.
   */
  read(ev: SSEEvent, sink: TextSink, name?: ModelName): void {
    const data = ev.data;
    const kind = deltaSpan(data, span);
    if (kind === TEXT) {
      const text = unescaped(data.slice(span.start, span.end));
      if (text !== undefined) {
        sink.noteText(text);
        return this.learnSpan(ev, name);
      }
    }
    this.forget();
    if (kind !== EMPTY_DELTA) sink.noteRaw(data);
  }

  /** Learns `ev`, read in full, if it can be (read()), its text left to the caller. */
  learn(ev: SSEEvent, name?: ModelName): void {
    if (deltaSpan(ev.data, span) !== TEXT) return this.forget();
    this.learnSpan(ev, name);
  }

  /** Learns `ev`, whose text deltaSpan has just found in `span`. */
  private learnSpan(ev: SSEEvent, name: ModelName | undefined): void {
    const data = ev.data;
    const raw = ev.raw;
    // An event of the common framing and all ASCII: its characters are its bytes.
    const ascii = ev.dataStart !== -1;
    const dataEnd = raw.length - 2;
    const dataStart = ascii ? ev.dataStart : dataEnd - Buffer.byteLength(data);
    if (!ascii && !commonShape(raw, dataStart, data)) return this.forget();
    let modelStart = -1;
    let modelEnd = -1;
    if (name) {
      const key = data.indexOf('"model":"');
      if (key > span.start) return this.forget();
      if (key !== -1) {
        // The name's quotes included; closed before the text, since `"delta":` after it is a key.
        const close = textStringEnd(data, key + 9);
        if (close === -1) return this.forget();
        const named = close - key - 7 === name.text.length && data.startsWith(name.text, key + 8);
        if (!named) {
          modelStart = byteAt(data, dataStart, key + 8, ascii);
          modelEnd = byteAt(data, dataStart, close + 1, ascii);
        }
      }
    }
    const textEnd = ascii ? dataStart + span.end : dataEnd - Buffer.byteLength(data.slice(span.end));
    this.head = raw.toString('latin1', 0, byteAt(data, dataStart, span.start, ascii));
    this.tail = raw.toString('latin1', textEnd, raw.length);
    this.modelStart = modelStart;
    this.modelEnd = modelEnd;
  }

  /** Nothing learned: the next event is read in full. */
  forget(): void {
    this.head = this.tail = '';
  }
}

/** Where character `i` of `data` lies in its event's bytes, `data` starting at byte `dataStart`. */
const byteAt = (data: string, dataStart: number, i: number, ascii: boolean) =>
  dataStart + (ascii ? i : Buffer.byteLength(data.slice(0, i)));

/**
 * `raw` is `data: <data>\n\n`, or the same after one `event: …\n` line, with `data` (one line)
 * its bytes from `dataStart`.
 */
function commonShape(raw: Buffer, dataStart: number, data: string): boolean {
  const n = raw.length;
  if (n < 8 || raw[n - 1] !== LF || raw[n - 2] !== LF || raw[n - 3] === CR || data.includes('\n')) return false;
  if (dataStart < 6 || raw.toString('latin1', dataStart - 6, dataStart) !== 'data: ') return false;
  if (dataStart === 6) return true;
  // One event line before it, and nothing else.
  return raw.toString('latin1', 0, 7) === 'event: ' && raw.indexOf(LF) === dataStart - 7 && raw[dataStart - 8] !== CR;
}
