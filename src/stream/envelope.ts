// A pass-through stream's events repeat one envelope around their text: an OpenAI chunk's id,
// created, model and fingerprint before its delta, its index, finish reason and usage after.
// Once an event has been read in full (usage, error and text looked for, the model found), the
// next one that opens and closes with the same characters is that event with other text, and
// everything the full reading found holds for it: no usage or error key can hide in the text,
// which has no unescaped quote. Such an event costs two comparisons and a quote search instead
// of the full reading's scans of its data (about a microsecond an event, measured alone).

import { deltaSpan, TEXT, textStringEnd, unescaped, type Span } from './delta-text.js';
import type { ModelName } from './json-bytes.js';
import { spliced } from './scratch.js';
import type { SSEEvent } from './sse.js';

/** Bytes before an event's data when it is a lone `data:` line: where `data` starts in `raw`. */
const DATA_START = 6;

const span: Span = { start: 0, end: 0 };

const ONE_ASCII_LINE = /^[\x00-\x09\x0b-\x7f]*$/;

/** The last event of one stream that was read in full, cut around its text. */
export class Envelope {
  /** The event's data up to its text's opening quote included; '' until an event is learned. */
  private head = '';
  /** Its data from the text's closing quote. */
  private tail = '';
  /** The model's name in its bytes, to be replaced; -1 when it already named the right one. */
  private modelStart = -1;
  private modelEnd = -1;
  /** Learned for send() (a name given): the event's bytes must be framed as the learned one's. */
  private renames = false;

  /**
   * The text of `ev`, if it is the learned event with other text: its bytes then are as the
   * learned event's were (send()). Undefined otherwise, and `ev` must be read in full.
   */
  text(ev: SSEEvent): string | undefined {
    const head = this.head;
    if (head === '') return undefined;
    const data = ev.data;
    const end = data.length - this.tail.length;
    // Compared as slices: string equality compares memory, where startsWith of a long string
    // goes character by character, ten times slower.
    if (end < head.length || (this.renames && !isDataLine(ev.raw)) || data.slice(0, head.length) !== head || data.slice(end) !== this.tail) return undefined;
    if (textStringEnd(data, head.length) !== end) return undefined;
    return unescaped(data.slice(head.length, end));
  }

  /** What goes to the client for an event text() read: its bytes, naming `name`. */
  send(ev: SSEEvent, name: ModelName): Buffer {
    return this.modelStart === -1 ? ev.raw : spliced(ev.raw, this.modelStart, this.modelEnd, name.bytes);
  }

  /**
   * Learns `ev`, read in full and found to carry neither usage nor an error, if its text has the
   * common shape (delta-text.ts). With `name` (for send()), the model's name (the first, as
   * eventWithModel renames it) must come before the text, and only a lone `data:` line whose
   * head is ASCII is learned, so that the head's characters are its bytes from the sixth on,
   * whatever the text holds. Without it only the text is read, whatever the framing.
   */
  learn(ev: SSEEvent, name?: ModelName): void {
    const data = ev.data;
    if (deltaSpan(data, span) !== TEXT) return this.forget();
    let modelStart = -1;
    let modelEnd = -1;
    if (name) {
      if (!isDataLine(ev.raw)) return this.forget();
      // An all-ASCII single data line (dataStart) needs no look at its head.
      if (ev.dataStart !== DATA_START && !ONE_ASCII_LINE.test(data.slice(0, span.start))) return this.forget();
      const key = data.indexOf('"model":"');
      if (key > span.start) return this.forget();
      if (key !== -1) {
        const start = key + 8;
        // Closed before the text: `"delta":` after it is a key, so outside any string.
        const end = textStringEnd(data, start + 1) + 1;
        const named = end - start === name.text.length && data.startsWith(name.text, start);
        if (!named) {
          modelStart = DATA_START + start;
          modelEnd = DATA_START + end;
        }
      }
    }
    this.head = data.slice(0, span.start);
    this.tail = data.slice(span.end);
    this.modelStart = modelStart;
    this.modelEnd = modelEnd;
    this.renames = name !== undefined;
  }

  /** Nothing learned: the next event is read in full. */
  forget(): void {
    this.head = this.tail = '';
  }
}

/** `raw` opens with `data: `: its data starts at its sixth byte, whatever follows. */
function isDataLine(raw: Buffer): boolean {
  return raw[0] === 0x64 && raw[1] === 0x61 && raw[2] === 0x74 && raw[3] === 0x61 && raw[4] === 0x3a && raw[5] === 0x20;
}
