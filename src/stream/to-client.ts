// Writes a stream's chunks to the client with backpressure: a full socket pauses the source
// (and with it the upstream connection) until uWS reports the socket writable again. What one
// upstream read produced goes out in one corked write, and the keep-alive pings are the
// writer's own timer rather than an operator in front of it. A same-dialect stream is read and
// written by one object (./pass-through.ts); a translated one is an Observable behind a valve
// (./valve.ts), written by ObservedWriter below.

import type { Observable, Observer } from 'rxjs';
import type { Exchange } from '../server/exchange.js';
import type { Metrics } from '../server/metrics.js';
import { kept, releaseScratch } from './scratch.js';
import { isFinal } from './sse.js';
import type { Valve } from './valve.js';

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

/** What every stream's writer is given. */
export interface WriterParts {
  ex: Exchange;
  metrics: Metrics;
  keepAlive: KeepAlive | undefined;
}

/**
 * One object per open stream, its steps methods: a closure per step (and the arrays they
 * shared) cost every open stream a few hundred bytes more, which at 10,000 streams shows.
 * Subclasses are the source: they say whether a read is under way and how to pause it.
 */
export abstract class ClientWriter {
  private buffered = 0;
  private maxBuffered = 0;
  /** The outcome is decided: nothing more is read or written by this object. */
  protected settled = false;
  private paused = false;
  private firstAt: number | undefined = undefined;
  private timer: NodeJS.Timeout | undefined = undefined;
  private held: Buffer[] | undefined = undefined;
  /** What the current upstream read produced: the first chunk, then any more. */
  private one: Buffer | undefined = undefined;
  private more: Buffer[] | undefined = undefined;
  protected readonly ex: Exchange;
  private readonly metrics: Metrics;
  private readonly keepAlive: KeepAlive | undefined;

  constructor(
    parts: WriterParts,
    private readonly resolve: (outcome: StreamOutcome) => void,
  ) {
    this.ex = parts.ex;
    this.metrics = parts.metrics;
    this.keepAlive = parts.keepAlive;
  }

  /** An upstream read is being turned into chunks: they go out together at its end (flush). */
  protected abstract midRead(): boolean;
  protected abstract pauseSource(): void;
  protected abstract resumeSource(): void;

  next(chunk: Buffer): void {
    this.firstAt ??= performance.now();
    if (this.held !== undefined || isFinal(chunk)) {
      // Held past this read (until the charge is recorded): scratch bytes would be reused.
      (this.held ??= []).push(kept(chunk));
      return;
    }
    if (this.one === undefined) this.one = chunk;
    else (this.more ??= []).push(chunk);
    // A source that is not in the middle of an upstream read is written at once.
    if (!this.midRead()) this.flush();
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
    // uWS copied what it was given (into its cork buffer, or its own for a full socket).
    releaseScratch();
    if (this.keepAlive) {
      if (this.timer) this.timer.refresh();
      else this.timer = setTimeout(ping, this.keepAlive.intervalMs, this);
    }
    if (this.paused || !ok) {
      this.buffered += bytes;
      if (this.buffered > this.maxBuffered) {
        this.maxBuffered = this.buffered;
        this.metrics.noteBuffered(this.maxBuffered);
      }
    }
    if (!ok && !this.paused) {
      this.paused = true;
      this.pauseSource();
      this.metrics.backpressure.inc();
      this.ex.onWritable(() => {
        this.buffered = 0;
        this.paused = false;
        this.resumeSource();
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
    this.one = this.more = undefined;
    const outcome: StreamOutcome = {
      completed,
      aborted,
      firstAt: this.firstAt,
      maxBufferedBytes: this.maxBuffered,
      held: this.held ?? [],
    };
    if (error !== undefined) outcome.error = error;
    this.resolve(outcome);
  }
}

/** A translated stream: the Observable's bytes, its upstream behind `valve`. */
export function streamToClient(body: Observable<Buffer>, valve: Valve, parts: WriterParts): Promise<StreamOutcome> {
  return new Promise((resolve) => {
    const writer = new ObservedWriter(valve, parts, resolve);
    valve.writer = writer;
    const subscription = body.subscribe(writer);
    parts.ex.onAbort(() => {
      subscription.unsubscribe();
      writer.finish(false, true);
    });
  });
}

class ObservedWriter extends ClientWriter implements Observer<Buffer> {
  constructor(
    private readonly valve: Valve,
    parts: WriterParts,
    resolve: (outcome: StreamOutcome) => void,
  ) {
    super(parts, resolve);
  }

  protected midRead(): boolean {
    return this.valve.reading;
  }

  protected pauseSource(): void {
    this.valve.pause();
  }

  protected resumeSource(): void {
    this.valve.resume();
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

  override finish(completed: boolean, aborted: boolean, error?: unknown): void {
    this.valve.writer = undefined;
    super.finish(completed, aborted, error);
  }
}

const ping = (writer: ClientWriter) => writer.ping();
