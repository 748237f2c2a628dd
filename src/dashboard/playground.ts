// The playground: a prompt from the dashboard, answered through the real inference path on the
// user's balance. For each request the gateway mints a key of the user's (ephemeral: never
// listed, never shown), sends POST /v1/chat/completions to itself over loopback with it, relays
// the event stream to the page, and revokes the key when the answer ends. The request is
// billed, limited and logged like any other; its usage record carries the request id this
// endpoint answers with (x-request-id), so the page can show the cost once it is recorded.

import { request } from 'undici';
import * as v from 'valibot';
import { generateKey } from '../accounts/keys.js';
import { GatewayError } from '../errors.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import type { Router } from '../server/router.js';
import { DashboardError, isStoreOutage, renderDashboardError } from './errors.js';
import { checkQueryText, PREFIX, readJson } from './http.js';
import { LIMITS, parseBody } from './schemas.js';
import { requireSession } from './sessions.js';

export const PLAYGROUND_LIMITS = { prompt: 8000, maxTokens: 4096, defaultMaxTokens: 512, rpm: 20 } as const;
/** An ephemeral key left live by a process that died mid-answer is revoked after this. */
const STALE_MS = 10 * 60_000;

export const PlaygroundBody = v.object({
  model: v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'), v.maxLength(LIMITS.model, `must be at most ${LIMITS.model} characters`)),
  prompt: v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'), v.maxLength(PLAYGROUND_LIMITS.prompt, `must be at most ${PLAYGROUND_LIMITS.prompt} characters`)),
  max_tokens: v.optional(v.pipe(v.number('must be a whole number'), v.safeInteger('must be a whole number'), v.minValue(1, 'must be at least 1'), v.maxValue(PLAYGROUND_LIMITS.maxTokens, `must be at most ${PLAYGROUND_LIMITS.maxTokens}`))),
}, 'must be a JSON object');

/** Where this process listens, known once it does; loopback when it listens on every address. */
export interface SelfAddress {
  host: string;
  port: number;
}

/** The inference surface's refusals, in the dashboard's codes. */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request', 402: 'insufficient_balance', 404: 'not_found', 413: 'request_too_large',
  429: 'too_many_attempts', 502: 'provider_error', 503: 'unavailable', 504: 'timeout',
};

/**
 * A refusal of the inner request as this API's status and code. Its key was minted a moment
 * ago, so a 401 means the gateway itself is not right: the caller may retry later.
 */
function refusalOf(status: number): [number, string] {
  if (status === 401) return [503, 'unavailable'];
  if (CODE_BY_STATUS[status]) return [status, CODE_BY_STATUS[status]];
  return status >= 500 ? [502, 'provider_error'] : [400, 'invalid_request'];
}

export function registerPlayground(router: Router, gw: Gateway, self: SelfAddress): void {
  async function mint(userId: string): Promise<{ id: string; key: string }> {
    await gw.sql`UPDATE api_keys SET revoked_at = now()
      WHERE user_id = ${userId} AND ephemeral AND revoked_at IS NULL AND created_at < now() - make_interval(secs => ${STALE_MS / 1000})`;
    const { key, hash, prefix } = generateKey();
    const [row] = await gw.sql<{ id: string }[]>`
      INSERT INTO api_keys (user_id, name, key_hash, prefix, rpm_limit, ephemeral)
      VALUES (${userId}, 'playground', ${hash}, ${prefix}, ${PLAYGROUND_LIMITS.rpm}, true) RETURNING id`;
    return { id: row.id, key };
  }

  async function handle(ex: Exchange): Promise<void> {
    checkQueryText(ex.rawQuery);
    const raw = readJson(ex);
    const { userId } = await requireSession(gw, ex);
    const body = parseBody(PlaygroundBody, await raw);
    // The inner request takes this one's id, so the x-request-id the page gets names the record.
    const requestId = ex.requestId;
    const minted = await mint(userId);
    const abort = new AbortController();
    const untie = ex.onAbort(() => abort.abort());
    try {
      const host = self.host.includes(':') ? `[${self.host}]` : self.host;
      const res = await request(`http://${host}:${self.port}/v1/chat/completions`, {
        method: 'POST',
        signal: abort.signal,
        headers: { authorization: `Bearer ${minted.key}`, 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify({
          model: body.model,
          max_tokens: body.max_tokens ?? PLAYGROUND_LIMITS.defaultMaxTokens,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: body.prompt }],
        }),
      });
      if (res.statusCode !== 200) {
        const text = await res.body.text();
        let message = `The model answered ${res.statusCode}.`;
        try {
          message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
        } catch {
          // not JSON: keep the status
        }
        const retry = Number(res.headers['retry-after']);
        const [status, code] = refusalOf(res.statusCode);
        throw new DashboardError(status, code, message, Number.isFinite(retry) && retry > 0 ? retry : undefined);
      }
      ex.beginStream(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
      for await (const chunk of res.body) {
        if (!ex.write(chunk as Buffer)) await new Promise<void>((resume) => ex.onWritable(resume));
      }
      ex.end();
    } finally {
      untie();
      await gw.keys.revoke(userId, minted.id).catch((err: unknown) => gw.log.warn({ err }, 'playground: could not revoke its key'));
    }
  }

  router.add({
    method: 'post',
    path: `${PREFIX}/playground`,
    name: 'dashboard_playground',
    onError: renderDashboardError,
    handler: (ex) =>
      handle(ex).catch((err: unknown) => {
        if (err instanceof GatewayError) throw err;
        if (isStoreOutage(err)) throw new DashboardError(503, 'unavailable', 'The service is temporarily unavailable; try again shortly.');
        if ((err as Error).name === 'AbortError') return;
        // Mid-stream failures cannot change the status any more: end what was sent.
        if (ex.headersSent) {
          gw.log.warn({ err }, 'playground: stream cut');
          ex.end();
          return;
        }
        throw err;
      }),
  });
}
