// Bytes → SSE events as an RxJS operator, for tests that replay recorded streams through a
// dialect's decoder. The gateway reads upstream events with the same SSEDecoder, inside the
// upstream body's data callback (src/stream/pass-through.ts, src/stream/valve.ts).

import { Observable, type OperatorFunction } from 'rxjs';
import { SSEDecoder, subscriberSink, type SSEEvent } from '../../src/stream/sse.js';

/** A trailing event without its blank line is flushed at completion. */
export function parseSSE(): OperatorFunction<Uint8Array, SSEEvent> {
  return (source) =>
    new Observable<SSEEvent>((subscriber) => {
      const decoder = new SSEDecoder();
      const sink = subscriberSink(subscriber);
      return source.subscribe({
        next: (chunk) => decoder.push(chunk, sink),
        error: (err) => subscriber.error(err),
        complete() {
          decoder.flush(sink);
          subscriber.complete();
        },
      });
    });
}
