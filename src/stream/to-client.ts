// Writes an Observable of bytes to the client with backpressure: a full socket closes the
// valve (pausing the upstream) until uWS reports the socket writable again. What one upstream
// read produced goes out in one corked write (the valve says when a read is done), and the
// keep-alive pings are this writer's own timer rather than an operator in front of it.

import type { Observable, Observer } from 'rxjs';
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
    const writer = new ClientWriter(ex, valve, metrics, keepAlive, resolve);
    valve.writer = writer;
    const subscription = body.subscribe(writer);
    ex.onAbort(() => {
      subscription.unsubscribe();
      writer.finish(false, true);
    });
  });
}

/**
 * One object per open stream, its steps methods: a closure per step (and the arrays they
 * shared) cost every open stream a few hundred bytes more, which at 10,000 streams shows.
 */
class ClientWriter implements Observer<Buffer> {
  private buffered = 0;
  private maxBuffered = 0;
  private settled = false;
  private firstAt: number | undefined = undefined;
  private timer: NodeJS.Timeout | undefined = undefined;
  private held: Buffer[] | undefined = undefined;
  /** What the current upstream read produced: the first chunk, then any more. */
  private one: Buffer | undefined = undefined;
  private more: Buffer[] | undefined = undefined;

  constructor(
    private readonly ex: Exchange,
    private readonly valve: Valve,
    private readonly metrics: Metrics,
    private readonly keepAlive: KeepAlive | undefined,
    private readonly resolve: (outcome: StreamOutcome) => void,
  ) {}

  next(chunk: Buffer): void {
    this.firstAt ??= performance.now();
    if (this.held !== undefined || isFinal(chunk)) {
      (this.held ??= []).push(chunk);
      return;
    }
    if (this.one === undefined) this.one = chunk;
    else (this.more ??= []).push(chunk);
    // A source that is not in the middle of an upstream read (the valve's) is written at once.
    if (!this.valve.reading) this.flush();
  }

  error(error: unknown): void {
    this.flush();
    this.finish(false, false, error);
  }

  complete(): void {
    this.valve.answered = true;
    this.flush();
    this.finish(true, false);
  }

  /** Writes what is pending, in one cork. */
  flush(): void {
    const one = this.one;
    if (one === undefined) return;
    const more = this.more;
    this.one = this.more = undefined;
    let bytes = one.length;
    let ok: boolean;
    if (more === undefined) ok = this.ex.write(one);
    else {
      more.unshift(one);
      for (let i = 1; i < more.length; i++) bytes += more[i]!.length;
      ok = this.ex.writeAll(more);
    }
    if (this.keepAlive) {
      if (this.timer) this.timer.refresh();
      else this.timer = setTimeout(ping, this.keepAlive.intervalMs, this);
    }
    const valve = this.valve;
    if (valve.paused || !ok) {
      this.buffered += bytes;
      if (this.buffered > this.maxBuffered) {
        this.maxBuffered = this.buffered;
        this.metrics.noteBuffered(this.maxBuffered);
      }
    }
    if (!ok && !valve.paused) {
      valve.pause();
      this.metrics.backpressure.inc();
      this.ex.onWritable(() => {
        this.buffered = 0;
        valve.resume();
      });
    }
  }

  ping(): void {
    // Nothing goes out after the final event, which waits for the charge.
    if (this.settled || this.held !== undefined) return;
    this.one = this.keepAlive!.ping;
    this.flush();
    this.timer!.refresh();
  }

  finish(completed: boolean, aborted: boolean, error?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.valve.writer = undefined;
    this.one = this.more = undefined;
    const outcome: StreamOutcome = { completed, aborted, firstAt: this.firstAt, maxBufferedBytes: this.maxBuffered, held: this.held ?? [] };
    if (error !== undefined) outcome.error = error;
    this.resolve(outcome);
  }
}

const ping = (writer: ClientWriter) => writer.ping();
