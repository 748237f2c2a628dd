// The text of a pass-through event, read without parsing it: what the stream meter counts when
// no usage comes (inference/meter.ts), and where a chat tap's envelope (./envelope.ts) cuts an
// event around its text.

/** Where an event's text lies in its data, as deltaSpan found it. */
export interface Span {
  start: number;
  end: number;
}

/** deltaSpan's answers. */
export const NOT_COMMON = 0;
export const EMPTY_DELTA = 1;
export const TEXT = 2;

/**
 * Whether `data` has the common shape: a single OpenAI choice whose delta is `{"content":"…"}`
 * (also opening with the assistant's role, or closing with a null refusal, as OpenAI's first
 * chunk does) or `{}` (its last), or an Anthropic `{"type":"text_delta","text":"…"}` delta.
 * TEXT sets `span` to the content of the text's JSON string (escapes and all); EMPTY_DELTA is
 * the `{}` delta; NOT_COMMON is anything else, which must be parsed. In valid JSON, a quote
 * that is not escaped is structural: `"delta":{` found after a `,` or `{` is a key, never text,
 * since text cannot hold an unescaped quote.
 */
export function deltaSpan(data: string, span: Span): number {
  // The first delta key, and which of the shapes opens it.
  const at = data.indexOf('"delta":');
  if (at === -1) return NOT_COMMON;
  const before = data.charCodeAt(at - 1);
  if (before !== 0x2c && before !== 0x7b) return NOT_COMMON;
  let start = at + DELTA.length;
  if (data.startsWith(EMPTY, start)) {
    // No text; and no other choice follows with a delta of its own.
    if (data.lastIndexOf('"choices":[', at) === -1 || data.indexOf('"delta":', start) !== -1) return NOT_COMMON;
    return EMPTY_DELTA;
  }
  const openai = data.startsWith(OPENAI_OPEN, start)
    ? OPENAI_OPEN
    : data.startsWith(OPENAI_ROLE_OPEN, start)
      ? OPENAI_ROLE_OPEN
      : undefined;
  if (openai !== undefined) {
    if (data.lastIndexOf('"choices":[', at) === -1) return NOT_COMMON;
    start += openai.length;
  } else if (data.startsWith(ANTHROPIC_OPEN, start)) {
    if (data.includes('"choices"')) return NOT_COMMON;
    start += ANTHROPIC_OPEN.length;
  } else return NOT_COMMON;
  const end = textStringEnd(data, start);
  if (end === -1) return NOT_COMMON;
  // The delta holds nothing else (bar a null refusal), and no other choice follows with a delta of its own.
  let close = end + 1;
  if (data.startsWith(NULL_REFUSAL, close)) close += NULL_REFUSAL.length;
  if (data.charCodeAt(close) !== 0x7d || data.indexOf('"delta":', close) !== -1) return NOT_COMMON;
  span.start = start;
  span.end = end;
  return TEXT;
}

/** Index of the quote that closes the JSON string whose content starts at `from`, or -1. */
export function textStringEnd(data: string, from: number): number {
  let end = from;
  for (;;) {
    end = data.indexOf('"', end);
    if (end === -1) return -1;
    let slashes = 0;
    while (data.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return end;
    end++;
  }
}

/** A JSON string's content as text; undefined if its escapes are not valid JSON. */
export function unescaped(raw: string): string | undefined {
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

const found: Span = { start: 0, end: 0 };

/**
 * The counted text of one pass-through event of the common shape (deltaSpan), '' for the empty
 * delta; undefined when the event is anything else, and it must be parsed.
 */
export function deltaText(data: string): string | undefined {
  const kind = deltaSpan(data, found);
  if (kind === EMPTY_DELTA) return '';
  if (kind === NOT_COMMON) return undefined;
  return unescaped(data.slice(found.start, found.end));
}

const DELTA = '"delta":';
const OPENAI_OPEN = '{"content":"';
const OPENAI_ROLE_OPEN = '{"role":"assistant","content":"';
const NULL_REFUSAL = ',"refusal":null';
const EMPTY = '{}';
const ANTHROPIC_OPEN = '{"type":"text_delta","text":"';
