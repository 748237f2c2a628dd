// Plumbing shared by the dashboard routes: JSON bodies, the envelope, store outages.

import { GatewayError } from '../errors.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import type { Router } from '../server/router.js';
import { isStoreOutage } from '../store/outage.js';
import { badRequest, DashboardError, renderDashboardError } from './errors.js';

export const PREFIX = '/api/dashboard';

/** Dashboard bodies are a few short fields; anything near this size is not a real client. */
const MAX_BODY_BYTES = 64 * 1024;

// Postgres refuses NUL in text and lone UTF-16 surrogates cannot be stored as UTF-8 at all:
// either would fail deep in a query as a 500, so every string is checked here, once, for
// every route.
// eslint-disable-next-line no-control-regex
const INVALID_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const INVALID_TEXT_MESSAGE = 'contains a NUL character or invalid Unicode';
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Every name and value of the query string: well-formed percent-encoded UTF-8, no NUL. */
export function checkQueryText(rawQuery: string): void {
  if (rawQuery === '') return;
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    let decodedName: string;
    let decoded: string;
    try {
      decodedName = decodeURIComponent(name.replace(/\+/g, ' '));
      decoded = decodeURIComponent(pair.replace(/\+/g, ' '));
    } catch {
      throw badRequest('invalid_text', `Query parameter "${safeName(name)}" is not valid percent-encoded UTF-8.`);
    }
    if (INVALID_TEXT.test(decoded))
      throw badRequest('invalid_text', `Query parameter "${safeName(decodedName)}" ${INVALID_TEXT_MESSAGE}.`);
  }
}

/** A parameter name quoted back: short, and without the characters that made it invalid. */
const safeName = (name: string) => name.replace(/[^\w.-]/g, '?').slice(0, 50);

/** Every string of a parsed body, object keys included; the path of the first bad one. */
function invalidTextPath(value: unknown): string | undefined {
  // Iterative: a body may nest as deep as its size allows.
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (INVALID_TEXT.test(v)) return path;
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push([item, path ? `${path}.${i}` : String(i)]));
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        const at = path ? `${path}.${k}` : k;
        if (INVALID_TEXT.test(k)) return at;
        stack.push([item, at]);
      }
    }
  }
  return undefined;
}

/**
 * Starts reading the body at once: uWS only lets a handler attach its data callback during the
 * synchronous part of the call. An empty body reads as `{}` so that optional-only bodies
 * (POST /keys) may be left out.
 */
export function readJson(ex: Exchange): Promise<unknown> {
  const p = ex.readBody(MAX_BODY_BYTES).then((raw) => {
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      throw badRequest('invalid_text', 'The request body is not valid UTF-8.');
    }
    if (text.trim() === '') return {};
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw badRequest('invalid_json', 'The request body is not valid JSON.');
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw badRequest('invalid_request', 'The request body must be a JSON object.');
    const bad = invalidTextPath(value);
    if (bad !== undefined) throw badRequest('invalid_text', `"${safeName(bad)}" ${INVALID_TEXT_MESSAGE}.`);
    return value;
  });
  // The handler may fail (bad session) before it awaits the body.
  p.catch(() => {});
  return p;
}

/**
 * A handler's answer: a JSON value (`body`, serialized here), JSON text (`json`, served as is),
 * or a body of text chunks streamed as they come (`stream`: what fits in no one buffer, the CSV
 * export). A stream's head goes out with its first
 * chunk, so what fails before that is still an error in the envelope.
 */
export type Reply = {
  status: number;
  body?: unknown;
  json?: string;
  stream?: AsyncIterable<string>;
  headers?: Record<string, string>;
};

/** Writes `chunks` with the socket's backpressure; a failure part-way drops the connection. */
async function streamReply(
  ex: Exchange,
  status: number,
  headers: Record<string, string>,
  chunks: AsyncIterable<string>,
): Promise<void> {
  const it = chunks[Symbol.asyncIterator]();
  let next = await it.next();
  ex.beginStream(status, headers);
  try {
    for (; !next.done && !ex.aborted; next = await it.next()) {
      if (!ex.write(next.value)) await ex.whenWritable();
    }
  } catch (err) {
    // The status is out: a cut connection is how the client learns the body is not whole.
    ex.close();
    throw err;
  } finally {
    if (ex.aborted) await it.return?.();
  }
  ex.end();
}

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
    handler: (ex) => {
      checkQueryText(ex.rawQuery);
      return def
        .handler(ex)
        .then((reply) => {
          const headers = { 'cache-control': 'no-store', ...reply.headers };
          if (reply.stream) return streamReply(ex, reply.status, headers, reply.stream);
          if (reply.status === 204) ex.send(204, '', headers);
          else if (reply.json !== undefined)
            ex.send(reply.status, reply.json, { 'content-type': 'application/json', ...headers });
          else ex.json(reply.status, reply.body, headers);
        })
        .catch((err: unknown) => {
          if (err instanceof GatewayError) throw err;
          if (isStoreOutage(err)) {
            gw.log.warn({ err, route: def.name }, 'dashboard: store unreachable');
            throw new DashboardError(503, 'unavailable', 'The service is temporarily unavailable; try again shortly.');
          }
          throw err;
        });
    },
  });
}
