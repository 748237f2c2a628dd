// The backpressure bridge. An upstream body becomes an Observable whose source can be
// paused: the client writer closes the valve when the client's socket is full, the
// Readable stops reading, and the upstream's TCP window closes behind it.

import { Observable } from 'rxjs';
import type { Readable } from 'node:stream';

export class Valve {
  private readable?: Readable;
  paused = false;
  attach(readable: Readable) {
    this.readable = readable;
    if (this.paused) readable.pause();
  }
  pause() {
    this.paused = true;
    this.readable?.pause();
  }
  resume() {
    this.paused = false;
    this.readable?.resume();
  }
}

/** Unsubscribing destroys the Readable, which aborts the upstream request. */
export function fromReadable(readable: Readable, valve: Valve): Observable<Buffer> {
  return new Observable<Buffer>((subscriber) => {
    const onData = (chunk: Buffer) => subscriber.next(chunk);
    const onEnd = () => subscriber.complete();
    const onError = (err: Error) => subscriber.error(err);
    readable.on('data', onData);
    readable.once('end', onEnd);
    readable.once('error', onError);
    valve.attach(readable);
    return () => {
      readable.off('data', onData);
      readable.off('end', onEnd);
      readable.off('error', onError);
      if (!readable.readableEnded) {
        // Destroying emits an AbortError nobody is waiting for any more.
        readable.on('error', () => {});
        readable.destroy();
      }
    };
  });
}
