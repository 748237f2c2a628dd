// Bytes → SSE events as an RxJS operator, for tests that replay recorded streams through a
// dialect's decoder. The gateway reads upstream events with the same SSEDecoder, inside the
// upstream body's data callback (src/stream/valve.ts).

import { Observable, type OperatorFunction } from 'rxjs';
import { SSEDecoder, type SSEEvent } from '../../src/stream/sse.js';

/** A trailing event without its blank line is flushed at completion. */
export function parseSSE(): OperatorFunction<Uint8Array, SSEEvent> {
  return (source) =>
    new Observable<SSEEvent>((subscriber) => {
      const decoder = new SSEDecoder();
      const emit = (ev: SSEEvent) => subscriber.next(ev);
      const stop = () => subscriber.closed;
      return source.subscribe({
        next: (chunk) => decoder.push(chunk, emit, stop),
        error: (err) => subscriber.error(err),
        complete() {
          decoder.flush(emit);
          subscriber.complete();
        },
      });
    });
}
