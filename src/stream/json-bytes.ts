// Patching JSON answers and events, for pass-through answers (dialects/…/upstream.ts).
// In valid JSON a quote that is not escaped is structural: no string holds one, so a byte
// sequence such as `"model":"` can only be a key followed by the start of its string value,
// never text. Multi-byte UTF-8 never contains an ASCII byte, so searching bytes finds exactly
// what searching the decoded text would.

import { textStringEnd } from './delta-text.js';
import { spliced } from './scratch.js';
import type { SSEEvent } from './sse.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Index of the quote that closes the JSON string whose content starts at `from`, or -1. */
export function stringEnd(buf: Buffer, from: number): number {
  let end = from;
  for (;;) {
    end = buf.indexOf(QUOTE, end);
    if (end === -1) return -1;
    let slashes = 0;
    while (buf[end - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return end;
    end++;
  }
}

const MODEL_KEY = Buffer.from('"model":"');

/**
 * `raw` with the first `"model":"…"` value from `from` replaced by `model` (a JSON string,
 * quotes included): the answer names the catalogue's model, not the upstream's. `raw` itself
 * when there is none or it already says so. Only the first: every event that carries the
 * answer's model has it before any nested one (a tool's settings echoed in `tools`, say).
 */
export function withModel(raw: Buffer, from: number, model: Buffer): Buffer {
  const key = raw.indexOf(MODEL_KEY, from);
  if (key === -1) return raw;
  const start = key + MODEL_KEY.length - 1;
  const end = stringEnd(raw, start + 1);
  if (end === -1) return raw;
  const length = end + 1 - start;
  if (length === model.length && raw.compare(model, 0, length, start, end + 1) === 0) return raw;
  return spliced(raw, start, end + 1, model);
}

/**
 * withModel for an event already decoded: the value is found in its data (string search is
 * several times cheaper than Buffer.indexOf's per call, and the tap has the string anyway)
 * and patched in its bytes. `modelText` is `model` as a string.
 */
export function eventWithModel(ev: SSEEvent, name: ModelName): Buffer {
  const model = name.bytes;
  const modelText = name.text;
  const data = ev.data;
  const key = data.indexOf('"model":"');
  if (key === -1) return ev.raw;
  const start = key + 8;
  const end = textStringEnd(data, start + 1);
  if (end === -1) return ev.raw;
  if (end + 1 - start === modelText.length && data.startsWith(modelText, start)) return ev.raw;
  // Not all ASCII: string indices are not byte offsets, so the bytes are searched instead.
  if (ev.dataStart === -1) return withModel(ev.raw, 0, model);
  return spliced(ev.raw, ev.dataStart + start, ev.dataStart + end + 1, model);
}

/** A model's name as a JSON string, and its bytes. */
export interface ModelName {
  text: string;
  bytes: Buffer;
}

const NAMES = new Map<string, ModelName>();

/**
 * One per catalogue id for the process's life, rather than one per stream: every open stream's
 * tap holds it, and the catalogue has few models.
 */
export function modelName(model: string): ModelName {
  let name = NAMES.get(model);
  if (!name) {
    // Catalogue ids come and go with reloads: the cache stays small all the same.
    if (NAMES.size >= 1024) NAMES.clear();
    const text = JSON.stringify(model);
    name = { text, bytes: Buffer.from(text) };
    NAMES.set(model, name);
  }
  return name;
}

/**
 * A whole answer's text with its first `"<field>":"…"` (`model`, Gemini's `modelVersion`)
 * replaced by `model`, or undefined unless that first one is the answer's own (`current`, as
 * parsed) in this compact form: the caller then sets it on the parsed answer and serialises that.
 */
export function textWithModel(text: string, current: string, model: string, field = 'model'): string | undefined {
  const key = text.indexOf(`"${field}":"`);
  if (key === -1) return undefined;
  const start = key + field.length + 3;
  const end = textStringEnd(text, start + 1);
  if (end === -1) return undefined;
  if (text.slice(start, end + 1) !== JSON.stringify(current)) return undefined;
  return text.slice(0, start) + JSON.stringify(model) + text.slice(end + 1);
}

/** A whole pass-through answer's text, naming `model`: spliced when it can be, else re-serialised. */
export function renamedAnswer(text: string, json: Record<string, unknown>, model: string, field = 'model'): string {
  const current = json[field];
  if (typeof current !== 'string' || current === model) return text;
  const spliced = textWithModel(text, current, model, field);
  if (spliced !== undefined) return spliced;
  json[field] = model;
  return JSON.stringify(json);
}
