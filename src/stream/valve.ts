// The backpressure bridge of a translated stream. An upstream body becomes an Observable of its
// SSE events whose source can be paused: the client writer closes the valve when the client's
// socket is full, the upstream connection stops being read, and the upstream's TCP window
// closes behind it.

import { Observable, type Subscriber } from 'rxjs';
import type { UpstreamBody } from '../upstream/client.js';
import { SSEDecoder, subscriberSink, type EventSink, type SSEEvent } from './sse.js';
import type { TextLane } from './text-lane.js';

interface Pausable {
  pause(): void;
  resume(): void;
}

export class Valve {
  private source?: Pausable;
  paused = false;
  /** An upstream read is being turned into events: the writer waits for its end to write. */
  reading = false;
  /** The client writer: writes what the read produced, in one go. */
  writer?: { next(chunk: Buffer): void; flush(): void } = undefined;
  /** The answer is complete (a translated stream's last event came): the rest of the body is not needed. */
  answered = false;
  attach(source: Pausable) {
    this.source = source;
    if (this.paused) source.pause();
  }
  pause() {
    this.paused = true;
    this.source?.pause();
  }
  resume() {
    this.paused = false;
    this.source?.resume();
  }
}

const BODY_GRACE_MS = 1000;

/** subscriberSink, with the lane offered each event's bytes first: what it takes goes to the writer. */
function laneSink(subscriber: Subscriber<SSEEvent>, lane: TextLane, valve: Valve): EventSink {
  return {
    event: (ev) => subscriber.next(ev),
    raw(raw) {
      if (subscriber.closed) return false;
      const out = lane.take(raw);
      if (out === undefined) return false;
      if (out.length > 0) valve.writer?.next(out);
      return true;
    },
    get stopped() {
      return subscriber.closed;
    },
  };
}

const cancelLate = (body: UpstreamBody) => body.cancel();

/**
 * The upstream's answer as an Observable of its SSE events, for a translated stream (a
 * same-dialect one is read by stream/pass-through.ts). Parsing runs in the body's own data
 * callback rather than as an operator. Unsubscribing before the end abandons the upstream
 * request.
 */
export function upstreamEvents(body: UpstreamBody, valve: Valve, lane?: TextLane): Observable<SSEEvent> {
  return new Observable<SSEEvent>((subscriber) => {
    let done = false;
    const decoder = new SSEDecoder();
    const sink = lane ? laneSink(subscriber, lane, valve) : subscriberSink(subscriber);
    valve.attach(body);
    body.consume({
      data: (chunk) => {
        valve.reading = true;
        try {
          decoder.push(chunk, sink);
        } finally {
          valve.reading = false;
        }
        valve.writer?.flush();
      },
      end: () => {
        done = true;
        if (subscriber.closed) return;
        decoder.flush(sink);
        subscriber.complete();
      },
      error: (err) => {
        done = true;
        subscriber.error(err);
      },
    });
    return () => {
      if (done) return;
      // A translated answer completes on its last event ([DONE], message_stop), a moment before
      // the body ends, usually in the same read. Cancelling then closed the upstream connection
      // (and built an error with its stack) for every stream, and the next one had to connect
      // afresh: the body is given a moment to end by itself, and keeps its connection. A client
      // that left is another matter: the upstream is stopped at once.
      if (valve.answered) setTimeout(cancelLate, BODY_GRACE_MS, body).unref();
      else body.cancel();
    };
  });
}
