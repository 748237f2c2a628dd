// One keep-alive connection pool per upstream origin (pool.ts), shared by every request.
// Answers come through undici's dispatch handler API rather than `request()`: no Readable per
// response, the bytes go from the parser to whoever consumes them, and backpressure is the
// dispatch controller's own pause and resume.

import { Readable } from 'node:stream';
import { errors as undiciErrors, type Dispatcher } from 'undici';
import type { Cancel, CancelListener } from './cancel.js';
import { OriginPool, type ClientOptions } from './pool.js';

export type UpstreamHeaders = Record<string, string | string[] | undefined>;

export interface UpstreamResponse {
  status: number;
  headers: UpstreamHeaders;
  body: UpstreamBody;
}

export interface UpstreamTimeouts {
  connectMs: number;
  firstByteMs: number;
  idleMs: number;
  connections: number;
  /** Free connections kept open per origin; one that comes free past this is closed. */
  idleConnections: number;
}

/** What consumes an answer's body, chunk by chunk. */
export interface BodySink {
  data(chunk: Buffer): void;
  end(): void;
  error(err: Error): void;
}

/** Chunks that arrived before anyone consumed them; past this the connection is paused. */
const EARLY_BYTES = 1 << 20;

/**
 * One upstream exchange: the dispatch handler, and the answer's body for its consumer. Chunks
 * that arrive before a consumer attaches (they can come in the same read as the headers) wait
 * here.
 */
export class UpstreamBody implements Dispatcher.DispatchHandler, CancelListener {
  private controller?: Dispatcher.DispatchController;
  private sink?: BodySink;
  private early: Buffer[] = [];
  private earlyBytes = 0;
  private ended = false;
  private failure?: Error;
  private answered = false;
  private heldByUs = false;

  private cancelling?: Cancel;

  // The exchange outlives the request's body and headers, and the answer's headers: nothing
  // here holds on to them, so a long stream keeps neither a large prompt nor the headers alive.
  // `answerWith` and `failWith` settle the caller's promise once the status and headers are in
  // (or the request failed before that), and are dropped then: they would keep it, and it
  // keeps the headers.
  constructor(
    cancel: Cancel | undefined,
    private answerWith?: (r: UpstreamResponse) => void,
    private failWith?: (err: Error) => void,
  ) {
    // The cancel covers the wait for an answer; after that, whoever consumes the body decides.
    if (cancel) {
      this.cancelling = cancel;
      cancel.listen(this);
    }
  }

  /** The client left before the answer came. */
  cancelled(reason: Error): void {
    if (!this.answered) this.cancel(reason);
  }

  /** Stops listening once an answer or a failure is in. */
  private dropCancel(): void {
    this.cancelling?.unlisten(this);
    this.cancelling = undefined;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: UpstreamHeaders): void {
    if (status < 200) return;
    // The controller keeps the raw header buffers for the exchange's life, and they are views
    // of the socket read that brought them: for a stream, minutes of a whole read buffer that
    // nothing here needs once `headers` is parsed.
    controller.rawHeaders = null;
    this.answered = true;
    this.dropCancel();
    const answerWith = this.answerWith;
    this.answerWith = this.failWith = undefined;
    answerWith?.({ status, headers, body: this });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.sink) {
      this.sink.data(chunk);
      return;
    }
    this.early.push(chunk);
    this.earlyBytes += chunk.length;
    if (this.earlyBytes > EARLY_BYTES && !controller.paused) {
      this.heldByUs = true;
      controller.pause();
    }
  }

  onResponseEnd(): void {
    this.ended = true;
    this.sink?.end();
  }

  onResponseError(controller: Dispatcher.DispatchController, err: Error): void {
    if (!this.answered) {
      this.dropCancel();
      const failWith = this.failWith;
      this.answerWith = this.failWith = undefined;
      failWith?.(err);
      return;
    }
    this.failure = err;
    this.sink?.error(err);
  }

  /** Hands the body to `sink`: what already arrived first, then the rest as it comes. */
  consume(sink: BodySink): void {
    this.sink = sink;
    const early = this.early;
    this.early = [];
    for (const chunk of early) sink.data(chunk);
    if (this.heldByUs) {
      this.heldByUs = false;
      this.controller?.resume();
    }
    if (this.failure) sink.error(this.failure);
    else if (this.ended) sink.end();
  }

  /** Stop reading from the upstream (the client cannot take more for now). */
  pause(): void {
    this.controller?.pause();
  }

  resume(): void {
    this.controller?.resume();
  }

  /** Abandons the exchange: the upstream request is aborted if it is still going. */
  cancel(reason?: unknown): void {
    if (this.ended || this.failure) return;
    this.controller?.abort(reason instanceof Error ? reason : new undiciErrors.RequestAbortedError());
  }

  /** The whole body as text; past `limit` bytes the exchange is abandoned and this rejects. */
  text(limit = Number.MAX_SAFE_INTEGER): Promise<string> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      this.consume({
        data: (chunk) => {
          size += chunk.length;
          if (size > limit) {
            this.cancel(new BodyTooLargeError(limit));
            return;
          }
          chunks.push(chunk);
        },
        end: () =>
          resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8')),
        error: reject,
      });
    });
  }
}

/** An upstream answer longer than the caller's limit. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`The upstream answer is larger than ${limit} bytes.`);
  }
}

/**
 * undici keeps a string or Buffer body on its request object until the answer has ended: for a
 * stream, minutes of a prompt that was sent in the first millisecond. Past this size the body
 * goes as a stream over a one-shot iterable instead, which lets it go once written.
 */
const KEPT_BODY_MAX = 16 * 1024;

function once(bytes: Buffer): Iterable<Buffer> {
  let held: Buffer | undefined = bytes;
  return {
    *[Symbol.iterator]() {
      const b = held;
      held = undefined;
      if (b) yield b;
    },
  };
}

export class UpstreamClient {
  private readonly pools = new Map<string, OriginPool>();
  private readonly options: Omit<ClientOptions, 'connect'>;
  private closed = false;

  constructor(private readonly t: UpstreamTimeouts) {
    this.options = {
      headersTimeout: t.firstByteMs,
      bodyTimeout: t.idleMs,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
    };
  }

  private pool(origin: string): OriginPool {
    if (this.closed) throw new undiciErrors.ClientClosedError();
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new OriginPool(origin, this.options, this.t.connectMs, this.t.connections, this.t.idleConnections);
      this.pools.set(origin, pool);
    }
    return pool;
  }

  /** Resolves once the upstream's status and headers are in; the body follows through `body`. */
  post(url: string, headers: Record<string, string>, body: string, cancel?: Cancel): Promise<UpstreamResponse> {
    if (cancel?.reason) return Promise.reject(cancel.reason);
    let origin: string;
    let path: string;
    try {
      // The path as the URL reads it, not what follows the origin's length: an origin drops a
      // default port (`https://host:443`) and user info, so the two need not line up.
      const target = new URL(url);
      origin = target.origin;
      path = target.pathname + target.search;
    } catch (err) {
      return Promise.reject(new undiciErrors.InvalidArgumentError(String((err as Error).message)));
    }
    let exchange!: UpstreamBody;
    const answer = new Promise<UpstreamResponse>((resolve, reject) => {
      exchange = new UpstreamBody(cancel, resolve, reject);
    });
    let payload: string | Readable = body;
    if (body.length > KEPT_BODY_MAX) {
      const bytes = Buffer.from(body);
      headers = { ...headers, 'content-length': String(bytes.length) };
      payload = Readable.from(once(bytes), { objectMode: false });
    }
    try {
      this.pool(origin).dispatch({ origin, path, method: 'POST', headers, body: payload }, exchange);
    } catch (err) {
      return Promise.reject(err);
    }
    return answer;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.pools.values()].map((p) => p.close()));
  }
}

/** Classifies a thrown request error: a time-out, or any other failure to get an answer. */
export function isTimeout(err: unknown): boolean {
  return (
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError ||
    (err as { code?: string })?.code === 'UND_ERR_CONNECT_TIMEOUT'
  );
}

/** A request undici refused to send (invalid header, method or body): nothing reached the upstream. */
export function isInvalidRequest(err: unknown): boolean {
  return err instanceof undiciErrors.InvalidArgumentError || (err as { code?: string })?.code === 'UND_ERR_INVALID_ARG';
}
