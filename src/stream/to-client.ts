// Writes an Observable of bytes to the client with backpressure: a full socket closes the
// valve (pausing the upstream) until uWS reports the socket writable again. What one upstream
// read produced goes out in one corked write (the valve says when a read is done), and the
// keep-alive pings are this writer's own timer rather than an operator in front of it.

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

/** `ping` is written whenever the answer has been silent for `intervalMs`, once it has begun. */
export interface KeepAlive {
  intervalMs: number;
  ping: Buffer;
}

export function streamToClient(body: Observable<Buffer>, ex: Exchange, valve: Valve, metrics: Metrics, keepAlive?: KeepAlive): Promise<StreamOutcome> {
  return new Promise((resolve) => {
    let buffered = 0;
    let maxBuffered = 0;
    let settled = false;
    let firstAt: number | undefined;
    let timer: NodeJS.Timeout | undefined;
    const held: Buffer[] = [];
    // What the current upstream read produced, written when the valve says the read is done.
    const pending: Buffer[] = [];
    const finish = (outcome: Omit<StreamOutcome, 'maxBufferedBytes' | 'held' | 'firstAt'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      valve.flushWrites = undefined;
      pending.length = 0;
      resolve({ ...outcome, firstAt, maxBufferedBytes: maxBuffered, held });
    };
    const write = () => {
      if (pending.length === 0) return;
      let bytes = 0;
      for (const chunk of pending) bytes += chunk.length;
      const ok = pending.length === 1 ? ex.write(pending[0]!) : ex.writeAll(pending);
      pending.length = 0;
      if (keepAlive) {
        if (timer) timer.refresh();
        else timer = setTimeout(ping, keepAlive.intervalMs);
      }
      if (valve.paused || !ok) {
        buffered += bytes;
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
    };
    const ping = () => {
      // Nothing goes out after the final event, which waits for the charge.
      if (settled || held.length > 0) return;
      pending.push(keepAlive!.ping);
      write();
      timer!.refresh();
    };
    valve.flushWrites = write;
    const subscription = body.subscribe({
      next(chunk) {
        firstAt ??= performance.now();
        if (held.length > 0 || isFinal(chunk)) {
          held.push(chunk);
          return;
        }
        pending.push(chunk);
        // A source that is not in the middle of an upstream read (the valve's) is written at once.
        if (!valve.reading) write();
      },
      error(error) {
        write();
        finish({ completed: false, aborted: false, error });
      },
      complete() {
        valve.answered = true;
        write();
        finish({ completed: true, aborted: false });
      },
    });
    ex.onAbort(() => {
      subscription.unsubscribe();
      finish({ completed: false, aborted: true });
    });
  });
}
