// The backpressure bridge. An upstream body becomes an Observable whose source can be
// paused: the client writer closes the valve when the client's socket is full, the upstream
// connection stops being read, and the upstream's TCP window closes behind it.

import { Observable } from 'rxjs';
import type { UpstreamBody } from '../upstream/client.js';

interface Pausable {
  pause(): void;
  resume(): void;
}

export class Valve {
  private source?: Pausable;
  paused = false;
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

/** Unsubscribing before the end abandons the upstream request. */
export function fromUpstream(body: UpstreamBody, valve: Valve): Observable<Buffer> {
  return new Observable<Buffer>((subscriber) => {
    let done = false;
    valve.attach(body);
    body.consume({
      data: (chunk) => subscriber.next(chunk),
      end: () => {
        done = true;
        subscriber.complete();
      },
      error: (err) => {
        done = true;
        subscriber.error(err);
      },
    });
    return () => {
      if (!done) body.cancel();
    };
  });
}
