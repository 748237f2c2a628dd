// Plumbing of /api/admin/*: the dashboard's envelope and routes (src/dashboard/http.ts), behind
// an admin session.

import { DashboardError, badRequest } from '../dashboard/errors.js';
import { dashRoute, readJson, type Reply } from '../dashboard/http.js';
import { parseBody, parseQuery } from '../dashboard/schemas.js';
import { requireSession } from '../dashboard/sessions.js';
import type { Exchange } from '../server/exchange.js';
import type { Router } from '../server/router.js';
import type { Gateway } from '../services.js';
import type { Actor } from './audit.js';
import type * as v from 'valibot';

export const ADMIN_PREFIX = '/api/admin';

export const forbidden = () => new DashboardError(403, 'forbidden', 'This needs an admin account.');

/**
 * The admin behind the session. Read on every call, like the session itself: a demotion or a
 * disable takes effect on the next request, with no cache to invalidate.
 */
export async function requireAdmin(gw: Gateway, ex: Exchange): Promise<Actor> {
  const { userId } = await requireSession(gw, ex);
  const [u] = await gw.sql<{ email: string; is_admin: boolean; disabled_at: Date | null }[]>`
    SELECT email, is_admin, disabled_at FROM users WHERE id = ${userId}`;
  if (!u?.is_admin || u.disabled_at) throw forbidden();
  return { id: userId, label: u.email };
}

/** What an admin handler is given beside the exchange. */
export interface AdminCall {
  actor: Actor;
  /** The path's segments after the route's wildcard (ids, sub-resources). */
  rest: string[];
  /** The request body, validated by `schema`. */
  body<S extends v.GenericSchema>(schema: S): Promise<v.InferOutput<S>>;
}

export type AdminHandler = (ex: Exchange, call: AdminCall) => Promise<Reply>;

/**
 * One admin route. The admin check comes first, before the body is looked at, so a user's
 * session gets 403 whatever it sends (the body is still read at once, as uWS needs, see readJson).
 */
export function adminRoute(
  router: Router,
  gw: Gateway,
  method: 'get' | 'post' | 'any',
  path: string,
  name: string,
  handler: AdminHandler,
  /** Bodies bigger than the dashboard's 64 KB (a catalogue file). */
  opts: { bodyLimit?: number } = {},
): void {
  const base = ADMIN_PREFIX + path.replace(/\*$/, '');
  dashRoute(router, gw, {
    method,
    path: ADMIN_PREFIX + path,
    name: `admin_${name}`,
    handler: async (ex) => {
      const raw =
        ex.method === 'GET' || ex.method === 'HEAD'
          ? undefined
          : opts.bodyLimit
            ? readLargeJson(ex, opts.bodyLimit)
            : readJson(ex);
      const actor = await requireAdmin(gw, ex);
      const rest = ex.path.slice(base.length).split('/').filter(Boolean);
      return handler(ex, {
        actor,
        rest,
        async body(schema) {
          if (!raw) throw badRequest('invalid_request', 'This endpoint takes no body.');
          return parseBody(schema, await raw);
        },
      });
    },
  });
}

export const query = <S extends v.GenericSchema>(ex: Exchange, schema: S): v.InferOutput<S> =>
  parseQuery(schema, ex.query);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function uuidParam(value: string | undefined, what: string): string {
  if (!value || !UUID.test(value)) throw new DashboardError(404, 'not_found', `No such ${what}.`);
  return value.toLowerCase();
}

/** A JSON body of up to `limit` bytes, read at once as uWS needs. */
function readLargeJson(ex: Exchange, limit: number): Promise<unknown> {
  const p = ex.readBody(limit).then((raw) => {
    try {
      return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw)) as unknown;
    } catch {
      throw badRequest('invalid_json', 'The request body is not valid UTF-8 JSON.');
    }
  });
  p.catch(() => {});
  return p;
}
