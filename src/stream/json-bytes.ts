// Reading and patching JSON events as bytes, for pass-through streams (dialects/…/upstream.ts).
// In valid JSON a quote that is not escaped is structural: no string holds one, so a byte
// sequence such as `"model":"` can only be a key followed by the start of its string value,
// never text. Multi-byte UTF-8 never contains an ASCII byte, so searching bytes finds exactly
// what searching the decoded text would.

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

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * Whether `key` (a quoted key, e.g. `"usage"`) occurs from `from` with a value opening with
 * `open` (`{`): the bytes' form of the regex /"usage"\s*:\s*\{/.
 */
export function hasKeyWith(buf: Buffer, from: number, key: Buffer, open: number): boolean {
  for (let at = buf.indexOf(key, from); at !== -1; at = buf.indexOf(key, at + 1)) {
    let i = at + key.length;
    while (isSpace(buf[i])) i++;
    if (buf[i] !== 0x3a) continue;
    i++;
    while (isSpace(buf[i])) i++;
    if (open === -1 || buf[i] === open) return true;
  }
  return false;
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
  const out = Buffer.allocUnsafe(raw.length - length + model.length);
  raw.copy(out, 0, 0, start);
  model.copy(out, start);
  raw.copy(out, start + model.length, end + 1);
  return out;
}

/**
 * A whole answer's text with its first `"model":"…"` replaced by `model`, or undefined unless
 * that first one is the answer's own (`current`, as parsed) in this compact form: the caller
 * then sets it on the parsed answer and serialises that.
 */
export function textWithModel(text: string, current: string, model: string): string | undefined {
  const key = text.indexOf('"model":"');
  if (key === -1) return undefined;
  const start = key + 8;
  let end = start + 1;
  for (;;) {
    end = text.indexOf('"', end);
    if (end === -1) return undefined;
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) break;
    end++;
  }
  if (text.slice(start, end + 1) !== JSON.stringify(current)) return undefined;
  return text.slice(0, start) + JSON.stringify(model) + text.slice(end + 1);
}

/** A whole pass-through answer's text, naming `model`: spliced when it can be, else re-serialised. */
export function renamedAnswer(text: string, json: Record<string, unknown>, model: string): string {
  if (typeof json.model !== 'string' || json.model === model) return text;
  const spliced = textWithModel(text, json.model, model);
  if (spliced !== undefined) return spliced;
  json.model = model;
  return JSON.stringify(json);
}
