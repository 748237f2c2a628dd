// Plumbing shared by the dashboard routes: JSON bodies, the envelope, store outages.

import { GatewayError } from '../errors.js';
import type { Gateway } from '../gateway.js';
import type { Exchange } from '../server/exchange.js';
import type { Router } from '../server/router.js';
import { badRequest, DashboardError, isStoreOutage, renderDashboardError } from './errors.js';

export const PREFIX = '/api/dashboard';

/** Dashboard bodies are a few short fields; anything near this size is not a real client. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * Starts reading the body at once: uWS only lets a handler attach its data callback during the
 * synchronous part of the call. An empty body reads as `{}` so that optional-only bodies
 * (POST /keys) may be left out.
 */
export function readJson(ex: Exchange): Promise<unknown> {
  const p = ex.readBody(MAX_BODY_BYTES).then((raw) => {
    const text = raw.toString('utf8');
    if (text.trim() === '') return {};
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw badRequest('invalid_json', 'The request body is not valid JSON.');
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badRequest('invalid_request', 'The request body must be a JSON object.');
    return value;
  });
  // The handler may fail (bad session) before it awaits the body.
  p.catch(() => {});
  return p;
}

/** `json` is a body already serialized (served as is); `body` is serialized here. */
export type Reply = { status: number; body?: unknown; json?: string; headers?: Record<string, string> };

/**
 * Registers one dashboard route: errors in the dashboard envelope, an unreachable store as 503
 * (a retryable condition, unlike a bug, which the router logs and renders as 500).
 */
export function dashRoute(
  router: Router,
  gw: Gateway,
  def: { method: 'get' | 'post' | 'any'; path: string; name: string; handler: (ex: Exchange) => Promise<Reply> },
): void {
  router.add({
    method: def.method,
    path: def.path,
    name: def.name,
    onError: renderDashboardError,
    handler: (ex) =>
      def.handler(ex).then(
        (reply) => {
          const headers = { 'cache-control': 'no-store', ...reply.headers };
          if (reply.status === 204) ex.send(204, '', headers);
          else if (reply.json !== undefined) ex.send(reply.status, reply.json, { 'content-type': 'application/json', ...headers });
          else ex.json(reply.status, reply.body, headers);
        },
        (err: unknown) => {
          if (err instanceof GatewayError) throw err;
          if (isStoreOutage(err)) {
            gw.log.warn({ err, route: def.name }, 'dashboard: store unreachable');
            throw new DashboardError(503, 'unavailable', 'The service is temporarily unavailable; try again shortly.');
          }
          throw err;
        },
      ),
  });
}
