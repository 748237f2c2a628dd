// Operations endpoints: liveness, readiness (both stores reachable), Prometheus metrics.

import type { Gateway } from '../gateway.js';
import type { Router } from './router.js';
import { gatewayMetrics } from './cluster-metrics.js';
import type { Exchange } from './exchange.js';
import { GatewayError } from '../errors.js';

/** `{"error":{"code","message"}}`: the envelope of the paths outside the API surfaces. */
export const plainError = (ex: Exchange, err: GatewayError) => ex.json(err.status, { error: { code: err.kind, message: err.message } });

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms).unref())]);
}

export function registerOps(router: Router, gw: Gateway): void {
  router.add({ method: 'get', path: '/healthz', name: 'healthz', onError: plainError, handler: (ex) => ex.json(200, { status: 'ok' }) });

  router.add({
    method: 'get',
    path: '/readyz',
    name: 'readyz',
    onError: plainError,
    handler: async (ex) => {
      const check = (p: Promise<unknown>) => withTimeout(p, 2000).then(() => 'ok', (err: Error) => `unreachable: ${err.message}`);
      const [postgres, hot, outbox] = await Promise.all([
        check(gw.sql`SELECT 1`),
        check(gw.hot.ping()),
        withTimeout(gw.hot.outboxLength(), 2000).catch(() => null),
      ]);
      const ready = postgres === 'ok' && hot === 'ok' && !gw.stopping;
      // The outbox length says how far Postgres is behind (records waiting to be written).
      ex.json(ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable', postgres, [gw.hot.kind]: hot, outbox, stopping: gw.stopping });
    },
  });

  // Anything no other route claims (uWS matches the most specific pattern first): a 404 in
  // JSON, where uWS by itself would just drop the connection.
  router.add({
    method: 'any',
    path: '/*',
    name: 'unknown',
    onError: plainError,
    handler: (ex) => {
      throw new GatewayError('not_found', `No such endpoint: ${ex.method} ${ex.path}.`);
    },
  });

  router.add({
    method: 'get',
    path: '/metrics',
    name: 'metrics',
    onError: plainError,
    handler: async (ex) => {
      const text = await gatewayMetrics(gw.metrics.registry);
      ex.send(200, text, { 'content-type': gw.metrics.registry.contentType });
    },
  });
}
