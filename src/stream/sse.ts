// Server-sent events: reading and writing them. The reader keeps each event's raw bytes so that
// a same-dialect stream can be forwarded byte for byte while only the events billing needs are
// looked at.

const LF = 0x0a;
const CR = 0x0d;

const EMPTY = Buffer.alloc(0);

/**
 * One event as it came on the wire. Its fields are read from the bytes only when asked for: a
 * pass-through stream looks at most events' bytes only (dialects/…/upstream.ts), and decoding
 * every event to a string, then slicing it, was most of what a forwarded token cost.
 */
export class SSEEvent {
  private eventName: string | undefined;
  private dataText: string | undefined;
  private fieldsRead: boolean;

  /**
   * `raw`: the event, blank-line terminator included. `dataStart`: where its data starts in
   * `raw` when the event is the common shape (one `data:` line, optionally after one `event:`
   * line, LF-terminated; the data then ends 2 bytes before `raw` does), else -1.
   */
  constructor(
    readonly raw: Buffer,
    readonly dataStart: number,
    eventName?: string,
    data?: string,
  ) {
    this.eventName = eventName;
    this.dataText = data;
    this.fieldsRead = dataStart === -1;
  }

  /** Where the data ends in `raw` (common shape only). */
  get dataEnd(): number {
    return this.raw.length - 2;
  }

  /** The `event:` field, when present. */
  get event(): string | undefined {
    if (!this.fieldsRead) this.readEventName();
    return this.eventName;
  }

  /** The `data:` lines joined with "\n". */
  get data(): string {
    return (this.dataText ??= this.raw.toString('utf8', this.dataStart, this.raw.length - 2));
  }

  private readEventName(): void {
    this.fieldsRead = true;
    // `event: ` is 7 bytes and the data line's `data: ` 6, followed by its LF.
    if (this.dataStart > 6) this.eventName = this.raw.toString('utf8', 7, this.dataStart - 7);
  }
}

/** Index just past the blank line that ends the first event in `buf` from `from`, or -1. */
function eventEnd(buf: Buffer, from: number): number {
  for (let i = buf.indexOf(LF, from); i !== -1; i = buf.indexOf(LF, i + 1)) {
    if (buf[i + 1] === LF) return i + 2;
    if (buf[i + 1] === CR && buf[i + 2] === LF) return i + 3;
  }
  return -1;
}

const EVENT_PREFIX = Buffer.from('event: ');
const DATA_PREFIX = Buffer.from('data: ');

/** `needle` at `at` in `buf`. */
export function bytesAt(buf: Buffer, at: number, needle: Buffer): boolean {
  if (at < 0 || at + needle.length > buf.length) return false;
  for (let i = 0; i < needle.length; i++) if (buf[at + i] !== needle[i]) return false;
  return true;
}

/**
 * Where the data of `raw` starts if the event is `data: …` alone or after one `event: …` line,
 * LF-terminated (nearly every event on the wire), else -1: those are read from a string below.
 */
function commonDataStart(raw: Buffer): number {
  const end = raw.length - 2;
  if (raw[end + 1] !== LF || raw[end] !== LF) return -1;
  let at = 0;
  if (bytesAt(raw, 0, EVENT_PREFIX)) {
    at = raw.indexOf(LF, 7) + 1;
    // An `event:` line without data, or one ending in CR: the full reading.
    if (at >= end || raw[at - 2] === CR) return -1;
  }
  if (!bytesAt(raw, at, DATA_PREFIX)) return -1;
  const nl = raw.indexOf(LF, at);
  if (nl !== end || raw[nl - 1] === CR) return -1;
  return at + 6;
}

function parseEventText(text: string, raw: Buffer): SSEEvent | null {
  let event: string | undefined;
  let data: string | undefined;
  for (const rawLine of text.split('\n')) {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data = data === undefined ? value : data + '\n' + value;
    else if (field === 'event') event = value;
  }
  // An event without data (e.g. a lone comment keep-alive) is not dispatched, as in browsers.
  if (data === undefined) return null;
  return new SSEEvent(raw, -1, event, data);
}

/**
 * Bytes → SSE events, chunk by chunk, for whoever reads an event stream: the upstream body's
 * own data callback (stream/valve.ts), and the tests' parseSSE operator.
 */
export class SSEDecoder {
  private pending: Buffer = EMPTY;

  /** Emits every event that `chunk` completes; stops early once `stop()` says so. */
  push(chunk: Uint8Array, emit: (ev: SSEEvent) => void, stop?: () => boolean): void {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    // Scan only the new bytes (less two, for a boundary split across chunks).
    const scanFrom = Math.max(0, this.pending.length - 2);
    const pending = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes]);
    let start = 0;
    for (let end = eventEnd(pending, scanFrom); end !== -1; end = eventEnd(pending, start)) {
      dispatch(pending.subarray(start, end), emit);
      start = end;
      if (stop?.()) break;
    }
    // A chunk used up is let go at once: on a paced stream it would otherwise live until the
    // next token, long enough to be promoted and then collected as old garbage.
    this.pending = start === 0 ? pending : start === pending.length ? EMPTY : pending.subarray(start);
  }

  /** A trailing event without its blank line, at the end of the stream. */
  flush(emit: (ev: SSEEvent) => void): void {
    const rest = this.pending;
    this.pending = EMPTY;
    if (rest.length > 0 && rest.toString('utf8').trim() !== '') dispatch(rest, emit);
  }
}

function dispatch(raw: Buffer, emit: (ev: SSEEvent) => void): void {
  const dataStart = commonDataStart(raw);
  if (dataStart !== -1) return emit(new SSEEvent(raw, dataStart));
  const ev = parseEventText(raw.toString('utf8'), raw);
  if (ev) emit(ev);
}

/** One SSE event on the wire. */
export function encodeSSE(data: string, event?: string): Buffer {
  return Buffer.from(event === undefined ? `data: ${data}\n\n` : `event: ${event}\ndata: ${data}\n\n`);
}

// The event that ends an answer ([DONE], message_stop) is held back by the client writer until
// the answer's charge is recorded: a client that received it was billed, whatever crashes next.
const FINAL = new WeakSet<Buffer>();

/** Marks `buf` as the final event of its stream; returns it. */
export function markFinal(buf: Buffer): Buffer {
  FINAL.add(buf);
  return buf;
}

export const isFinal = (buf: Buffer): boolean => FINAL.has(buf);
