// Server-sent events as RxJS operators. The parser keeps each event's raw bytes so that a
// same-dialect stream can be forwarded byte for byte while only the events billing needs
// are looked at.

import { Observable, type OperatorFunction } from 'rxjs';

export interface SSEEvent {
  /** The `event:` field, when present. */
  event?: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The event as it came on the wire, blank-line terminator included. */
  raw: Buffer;
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

function parseEventText(text: string): { event?: string; data: string } | null {
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
  return event === undefined ? { data } : { event, data };
}

/** Bytes → SSE events. A trailing event without its blank line is flushed at completion. */
export function parseSSE(): OperatorFunction<Uint8Array, SSEEvent> {
  return (source) =>
    new Observable<SSEEvent>((subscriber) => {
      let pending: Buffer = EMPTY;
      const emit = (raw: Buffer) => {
        const parsed = parseEventText(raw.toString('utf8'));
        if (parsed) subscriber.next({ ...parsed, raw });
      };
      return source.subscribe({
        next(chunk) {
          const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
          // Scan only the new bytes (less two, for a boundary split across chunks).
          const scanFrom = Math.max(0, pending.length - 2);
          pending = pending.length === 0 ? bytes : Buffer.concat([pending, bytes]);
          let start = 0;
          for (let end = eventEnd(pending, scanFrom); end !== -1; end = eventEnd(pending, start)) {
            emit(pending.subarray(start, end));
            start = end;
            if (subscriber.closed) return;
          }
          // A chunk used up is let go at once: on a paced stream it would otherwise live until
          // the next token, long enough to be promoted and then collected as old garbage.
          pending = start === 0 ? pending : start === pending.length ? EMPTY : pending.subarray(start);
        },
        error(err) {
          subscriber.error(err);
        },
        complete() {
          if (pending.length > 0 && pending.toString('utf8').trim() !== '') emit(pending);
          subscriber.complete();
        },
      });
    });
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
