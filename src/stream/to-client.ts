// Writes an Observable of bytes to the client with backpressure: a full socket closes the
// valve (pausing the upstream) until uWS reports the socket writable again.

import type { Observable } from 'rxjs';
import type { Exchange } from '../server/exchange.js';
import type { Metrics } from '../server/metrics.js';
import type { Valve } from './valve.js';
import { isFinal } from './sse.js';

export interface StreamOutcome {
  /** The stream reached its end (complete), rather than an error or a client abort. */
  completed: boolean;
  aborted: boolean;
  error?: unknown;
  /** When the first bytes of the answer went to the client (performance.now()), if any did. */
  firstAt?: number;
  /** Bytes written while the client's socket was full: what the gateway held for it. */
  maxBufferedBytes: number;
  /**
   * The final event (and anything after it), not written yet: the caller records the charge
   * first, then writes these and ends the response.
   */
  held: Buffer[];
}

export function streamToClient(body: Observable<Buffer>, ex: Exchange, valve: Valve, metrics: Metrics): Promise<StreamOutcome> {
  return new Promise((resolve) => {
    let buffered = 0;
    let maxBuffered = 0;
    let settled = false;
    let firstAt: number | undefined;
    const held: Buffer[] = [];
    const finish = (outcome: Omit<StreamOutcome, 'maxBufferedBytes' | 'held' | 'firstAt'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...outcome, firstAt, maxBufferedBytes: maxBuffered, held });
    };
    const subscription = body.subscribe({
      next(chunk) {
        firstAt ??= performance.now();
        if (held.length > 0 || isFinal(chunk)) {
          held.push(chunk);
          return;
        }
        const ok = ex.write(chunk);
        if (valve.paused || !ok) {
          buffered += chunk.length;
          if (buffered > maxBuffered) {
            maxBuffered = buffered;
            metrics.noteBuffered(maxBuffered);
          }
        }
        if (!ok && !valve.paused) {
          valve.pause();
          metrics.backpressure.inc();
          ex.onWritable(() => {
            buffered = 0;
            valve.resume();
          });
        }
      },
      error(error) {
        finish({ completed: false, aborted: false, error });
      },
      complete() {
        finish({ completed: true, aborted: false });
      },
    });
    ex.onAbort(() => {
      subscription.unsubscribe();
      finish({ completed: false, aborted: true });
    });
  });
}
