// The web dashboard (web/, built by web/build.ts): read into memory at start and served from
// there. Hashed assets are cached for a year; index.html is revalidated on every load (its
// ETag makes that a 304), so a new build is picked up at once. Only the client routes the
// build lists get index.html: /v1, /api and the ops paths keep their own answers and 404s.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import type { Exchange } from './exchange.js';
import { plainError } from './plain-error.js';
import type { Router } from './router.js';

interface Asset {
  body: Buffer;
  /** Only kept when it is smaller. */
  gzip?: Buffer;
  headers: Record<string, string>;
}

export interface WebAssets {
  index: Asset;
  /** By URL path (`/assets/app-HASH.js`). */
  files: Map<string, Asset>;
  routes: string[];
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

// The dashboard only ever talks to its own origin; inline images are the QR codes (data: URLs).
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  // The verification link carries its token in the URL: never hand it on as a referrer.
  'referrer-policy': 'no-referrer',
};

function asset(body: Buffer, headers: Record<string, string>): Asset {
  const gzip = gzipSync(body, { level: 9 });
  return { body, gzip: gzip.length < body.length ? gzip : undefined, headers: { vary: 'accept-encoding', ...headers } };
}

/** The build in `dir`, or undefined (with the reason logged) when there is none. */
export function loadWebAssets(dir: string, log: Logger): WebAssets | undefined {
  let manifest: { routes: string[] };
  let html: Buffer;
  try {
    manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    html = readFileSync(path.join(dir, 'index.html'));
  } catch (err) {
    log.warn(
      { dir, reason: (err as Error).message },
      'web dashboard not served: no build in WEB_DIR (npm run build:web makes one)',
    );
    return undefined;
  }
  const etag = `"${createHash('sha256').update(html).digest('base64url').slice(0, 22)}"`;
  const index = asset(html, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-cache',
    etag,
    ...PAGE_HEADERS,
  });
  const files = new Map<string, Asset>();
  for (const name of readdirSync(path.join(dir, 'assets'))) {
    const type = TYPES[path.extname(name)] ?? 'application/octet-stream';
    const headers = {
      'content-type': type,
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
    };
    files.set(`/assets/${name}`, asset(readFileSync(path.join(dir, 'assets', name)), headers));
  }
  return { index, files, routes: manifest.routes };
}

function serve(ex: Exchange, a: Asset): void {
  if (a.headers.etag && ex.headers['if-none-match'] === a.headers.etag) {
    ex.send(304, '', a.headers);
    return;
  }
  if (a.gzip && /\bgzip\b/.test(ex.headers['accept-encoding'] ?? ''))
    ex.send(200, a.gzip, { ...a.headers, 'content-encoding': 'gzip' });
  else ex.send(200, a.body, a.headers);
}

/**
 * Answers a browser that opened a path the dashboard does not have with the dashboard's own
 * not-found page (index.html with a 404: the app sees the path is not one of its routes) instead
 * of raw JSON; true when it did. API clients, which do not ask for HTML, and the API prefixes
 * keep their JSON 404.
 */
export type WebNotFound = (ex: Exchange) => boolean;

/** Serves the build in `dir` when there is one; gives the not-found page to the catch-all route. */
export function registerStatic(router: Router, dir: string, log: Logger): WebNotFound | undefined {
  const web = loadWebAssets(dir, log);
  if (!web) return undefined;
  for (const route of web.routes) {
    router.add({ method: 'get', path: route, name: 'web', onError: plainError, handler: (ex) => serve(ex, web.index) });
  }
  router.add({
    method: 'get',
    path: '/assets/*',
    name: 'web_asset',
    onError: plainError,
    handler: (ex) => {
      const a = web.files.get(ex.path);
      if (!a) throw new GatewayError('not_found', `No such file: ${ex.path.slice(0, 200)}.`);
      serve(ex, a);
    },
  });
  const { etag: _etag, ...pageHeaders } = web.index.headers;
  return (ex) => {
    if (
      ex.method !== 'GET' ||
      /^\/(v1|api|assets)(\/|$)/.test(ex.path) ||
      !/\btext\/html\b/.test(ex.headers.accept ?? '')
    )
      return false;
    ex.send(404, web.index.body, { ...pageHeaders, 'cache-control': 'no-store' });
    return true;
  };
}
