// Server-sent events: reading and writing them. The reader keeps each event's raw bytes so that
// a same-dialect stream can be forwarded byte for byte while only the events billing needs are
// looked at.

export interface SSEEvent {
  /** The `event:` field, when present. */
  event?: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The event as it came on the wire, blank-line terminator included. */
  raw: Buffer;
  /**
   * Where `data` starts in `raw`, when that is also where it starts in the decoded text: the
   * common shape (below) of an event that is all ASCII, so that an index into `data` plus this
   * is a byte offset into `raw` (a pass-through tap patches bytes by it). -1 otherwise.
   */
  dataStart: number;
}

const LF = 0x0a;
const CR = 0x0d;

const EMPTY = Buffer.alloc(0);

/** Index just past the blank line that ends the first event in `buf` from `from`, or -1. */
function eventEnd(buf: Buffer, from: number): number {
  for (let i = buf.indexOf(LF, from); i !== -1; i = buf.indexOf(LF, i + 1)) {
    if (buf[i + 1] === LF) return i + 2;
    if (buf[i + 1] === CR && buf[i + 2] === LF) return i + 3;
  }
  return -1;
}

/**
 * `data: …` alone or after one `event: …` line, LF-terminated: nearly every event on the wire,
 * read with two slices instead of a split and a loop over its lines. Undefined for any other
 * shape, which the full reading below handles.
 */
function parseCommon(text: string, raw: Buffer): SSEEvent | undefined {
  const end = text.length - 2;
  if (text.charCodeAt(end + 1) !== LF) return undefined;
  let at = 0;
  let event: string | undefined;
  if (text.startsWith('event: ')) {
    at = text.indexOf('\n') + 1;
    if (text.charCodeAt(at - 2) === CR) return undefined;
    event = text.slice(7, at - 1);
  }
  if (!text.startsWith('data: ', at)) return undefined;
  const nl = text.indexOf('\n', at);
  if (nl !== end || text.charCodeAt(nl - 1) === CR) return undefined;
  // A string decoded from bytes is as long as they are only when every byte was ASCII.
  return { event, data: text.slice(at + 6, nl), raw, dataStart: text.length === raw.length ? at + 6 : -1 };
}

function parseEventText(text: string, raw: Buffer): SSEEvent | null {
  const common = parseCommon(text, raw);
  if (common) return common;
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
  return { event, data, raw, dataStart: -1 };
}

/**
 * Where a decoder's events go: `event` for each, until `stopped` says the reader is done. A sink
 * with `raw` is offered each event's bytes first, and takes the ones it can handle as bytes
 * (true): those are never decoded.
 */
export interface EventSink {
  event(ev: SSEEvent): void;
  raw?(raw: Buffer): boolean;
  readonly stopped?: boolean;
}

/** A sink that hands each event to a subscriber (an RxJS one) until it is closed. */
export function subscriberSink(subscriber: { next(ev: SSEEvent): void; readonly closed: boolean }): EventSink {
  return {
    event: (ev) => subscriber.next(ev),
    get stopped() {
      return subscriber.closed;
    },
  };
}

/**
 * Bytes → SSE events, chunk by chunk, for whoever reads an event stream: a pass-through
 * stream (stream/pass-through.ts), a translated stream's source (stream/valve.ts), and the
 * tests' parseSSE operator. The sink is an object rather than callbacks: a stream's own object
 * is its sink, with no closure to hold per stream.
 */
export class SSEDecoder {
  private pending: Buffer = EMPTY;

  /** Sends `sink` every event that `chunk` completes; stops early once the sink is stopped. */
  push(chunk: Uint8Array, sink: EventSink): void {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    // Scan only the new bytes (less two, for a boundary split across chunks).
    const scanFrom = Math.max(0, this.pending.length - 2);
    const pending = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes]);
    let start = 0;
    for (
      let end = eventEnd(pending, scanFrom);
      end !== -1;
      end = start < pending.length ? eventEnd(pending, start) : -1
    ) {
      // A read that is one whole event (a paced stream's every token) is that event's bytes.
      const raw = start === 0 && end === pending.length ? pending : pending.subarray(start, end);
      if (sink.raw === undefined || !sink.raw(raw)) dispatch(raw, sink);
      start = end;
      if (sink.stopped) break;
    }
    // A chunk used up is let go at once: on a paced stream it would otherwise live until the
    // next token, long enough to be promoted and then collected as old garbage.
    this.pending = start === 0 ? pending : start === pending.length ? EMPTY : pending.subarray(start);
  }

  /** A trailing event without its blank line, at the end of the stream. */
  flush(sink: EventSink): void {
    const rest = this.pending;
    this.pending = EMPTY;
    if (rest.length > 0 && rest.toString('utf8').trim() !== '') dispatch(rest, sink);
  }
}

function dispatch(raw: Buffer, sink: EventSink): void {
  const ev = parseEventText(raw.toString('utf8'), raw);
  if (ev) sink.event(ev);
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
