// Routes on the uWS app. Each route names its error envelope, so an error is always
// rendered in the dialect of the surface that was called.

import type { Logger } from 'pino';
import { asGatewayError, GatewayError } from '../errors.js';
import type { TrustedProxies } from './client-address.js';
import { Exchange } from './exchange.js';
import type { Metrics } from './metrics.js';
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocketBehavior } from './uws.js';

export type Handler = (ex: Exchange) => Promise<void> | void;
export type ErrorRenderer = (ex: Exchange, err: GatewayError) => void;

export interface RouteDef {
  method: 'get' | 'post' | 'delete' | 'any';
  /** uWS pattern; `:name` segments become ex.params in order. */
  path: string;
  /** Metric label. */
  name: string;
  handler: Handler;
  onError: ErrorRenderer;
}

/**
 * A refusal answered on the next turn of the event loop. uWS parses whatever else came in the
 * same read as soon as a handler has answered, so bytes past an ambiguous body would be served
 * as a request of their own before the connection closes; while this answer is pending, uWS
 * drops the connection on such bytes instead.
 */
const answerLater = (err: GatewayError) => new Promise<void>((_, reject) => setImmediate(() => reject(err)));

export class Router {
  inflight = 0;
  private readonly live = new Set<Exchange>();
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly app: TemplatedApp,
    private readonly log: Logger,
    private readonly metrics: Metrics,
    /** TRUST_PROXY, when it lists any proxy. */
    private readonly proxies?: TrustedProxies,
  ) {}

  add(def: RouteDef): void {
    const params = (def.path.match(/:[A-Za-z_]+/g) ?? []).length;
    // uWS names its DELETE method `del`.
    const method = def.method === 'delete' ? 'del' : def.method;
    const app = this.app as unknown as Record<string, TemplatedApp['get']>;
    const handle = (res: HttpResponse, req: HttpRequest) => this.serve(def, res, req, params);
    app[method].call(this.app, def.path, handle);
    // HEAD is GET without the body (Exchange sends none); uWS would otherwise hand it to the
    // catch-all route, which answers 404.
    if (def.method === 'get') app.head.call(this.app, def.path, handle);
  }

  /** WebSocket connections on `path` (uWS serves them natively; their upgrade comes first). */
  socket<T>(path: string, behavior: WebSocketBehavior<T>): void {
    this.app.ws<T>(path, behavior);
  }

  /**
   * One request through `def`: its handler, its error envelope, its metrics, and the wait for
   * it at shutdown. `res` and `req` are uWS's, or a stand-in for a request that came in another
   * way (a WebSocket's message, src/responses/websocket.ts).
   */
  serve(def: RouteDef, res: HttpResponse, req: HttpRequest, params = 0): void {
    let ex: Exchange;
    try {
      ex = new Exchange(res, req, params, this.proxies);
    } catch (err) {
      // uWS aborts the whole process when a handler returns without answering or attaching
      // an abort handler, so a request we cannot even read still gets an answer.
      this.log.error({ err, route: def.name }, 'unreadable request');
      res.cork(() => res.writeStatus('400 Bad Request').end());
      return;
    }
    this.inflight++;
    this.live.add(ex);
    let result: Promise<void> | void;
    try {
      result = ex.framingError ? answerLater(ex.framingError) : def.handler(ex);
    } catch (err) {
      result = Promise.reject(err);
    }
    // One reaction per request, not a catch and a finally: each open stream holds its
    // request's pending reactions (promises and closures) for as long as it lasts.
    const done = () => {
      const status = ex.aborted && !ex.finished ? 499 : ex.status;
      this.metrics.observe(def.name, status, (performance.now() - ex.startedAt) / 1000);
      this.live.delete(ex);
      if (--this.inflight === 0) for (const w of this.idleWaiters.splice(0)) w();
    };
    Promise.resolve(result).then(done, (err: unknown) => {
      try {
        // A client that went away makes in-flight work fail (aborted upstream calls): not a bug.
        if (!(err instanceof GatewayError) && !ex.aborted)
          this.log.error({ err, requestId: ex.requestId, route: def.name }, 'unhandled error');
        if (ex.aborted || ex.finished) return;
        if (ex.headersSent) ex.close();
        else def.onError(ex, asGatewayError(err));
      } finally {
        done();
      }
    });
  }

  /** Drop every open connection; their abort handlers settle what they reserved. */
  closeAll(): void {
    for (const ex of this.live) ex.close();
  }

  /** Resolves when no request is in flight, or after `timeoutMs`; true if it went idle. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.inflight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
