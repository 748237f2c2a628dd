// Operations endpoints: liveness, readiness (both stores reachable), Prometheus metrics.
//
// Metrics and the details of readiness (store errors, the outbox length) are for the operator:
// on the public port they need METRICS_TOKEN as a bearer token; on OPS_PORT, which listens on
// 127.0.0.1 only, they are served as they are.

import type { WebNotFound } from './static.js';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Gateway } from '../services.js';
import { plainError } from './plain-error.js';
import type { Router } from './router.js';
import { gatewayMetrics } from './cluster-metrics.js';
import type { Exchange } from './exchange.js';
import { GatewayError } from '../errors.js';

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms).unref())]);
}

const digest = (s: string) => createHash('sha256').update(s).digest();

type Access = 'granted' | 'no_token' | 'wrong_token' | 'not_configured';

/** Whether this request may see operator details; `ops` is the OPS_PORT listener. */
function operatorAccess(gw: Gateway, ex: Exchange, ops: boolean): Access {
  if (ops) return 'granted';
  const expected = gw.config.METRICS_TOKEN;
  if (!expected) return 'not_configured';
  const m = /^Bearer\s+(\S+)\s*$/i.exec(ex.headers.authorization ?? '');
  if (!m) return 'no_token';
  // Digests first: equal lengths for timingSafeEqual, and no early exit on the first difference.
  return timingSafeEqual(digest(m[1]), digest(expected)) ? 'granted' : 'wrong_token';
}

/** `ops`: the routes of the OPS_PORT listener, where no token is asked for. */
export function registerOps(router: Router, gw: Gateway, ops = false, webNotFound?: WebNotFound): void {
  router.add({
    method: 'get',
    path: '/healthz',
    name: 'healthz',
    onError: plainError,
    handler: (ex) => ex.json(200, { status: 'ok' }),
  });

  router.add({
    method: 'get',
    path: '/readyz',
    name: 'readyz',
    onError: plainError,
    handler: async (ex) => {
      const check = (p: Promise<unknown>) =>
        withTimeout(p, 2000).then(
          () => 'ok',
          (err: Error) => `unreachable: ${err.message}`,
        );
      const [postgres, hot, outbox] = await Promise.all([
        check(gw.sql`SELECT 1`),
        check(gw.hot.ping()),
        withTimeout(gw.hot.outboxLength(), 2000).catch(() => null),
      ]);
      const ready = postgres === 'ok' && hot === 'ok' && !gw.stopping;
      const status = ready ? 'ready' : 'unavailable';
      // Store errors name internal hosts: a load balancer needs the status code, nothing more.
      if (operatorAccess(gw, ex, ops) !== 'granted') return ex.json(ready ? 200 : 503, { status });
      // The outbox length says how far Postgres is behind (records waiting to be written).
      ex.json(ready ? 200 : 503, { status, postgres, [gw.hot.kind]: hot, outbox, stopping: gw.stopping });
    },
  });

  // Anything no other route claims (uWS matches the most specific pattern first): a 404 in
  // JSON, where uWS by itself would just drop the connection; a browser gets the dashboard's
  // not-found page (static.ts).
  router.add({
    method: 'any',
    path: '/*',
    name: 'unknown',
    onError: plainError,
    handler: (ex) => {
      if (webNotFound?.(ex)) return;
      throw new GatewayError('not_found', `No such endpoint: ${ex.method} ${ex.path}.`);
    },
  });

  router.add({
    method: 'get',
    path: '/metrics',
    name: 'metrics',
    onError: plainError,
    handler: async (ex) => {
      switch (operatorAccess(gw, ex, ops)) {
        case 'not_configured':
          throw new GatewayError(
            'permission',
            'Metrics are served on OPS_PORT, or here with METRICS_TOKEN; neither is configured.',
          );
        case 'no_token':
          throw new GatewayError('authentication', 'Send METRICS_TOKEN as "Authorization: Bearer <token>".');
        case 'wrong_token':
          throw new GatewayError('permission', 'Wrong metrics token.');
      }
      const text = await gatewayMetrics(gw.metrics.registry);
      ex.send(200, text, { 'content-type': gw.metrics.registry.contentType });
    },
  });
}
