// The playground: a prompt from the dashboard, answered through the real inference path on the
// user's balance. The user has one playground key (ephemeral: never listed, never shown), made
// on first use and kept: the gateway sends POST /v1/chat/completions to itself over loopback
// with it and relays the event stream to the page. So the request is billed, limited (the key's
// PLAYGROUND_LIMITS.rpm a minute, shared by every process) and logged like any other, its
// refusals folded per minute as any key's are; its usage record carries the request id this
// endpoint answers with (x-request-id), so the page can show the cost once it is recorded. The
// key's secret is derived from its row's id and a gateway secret (src/store/secrets.ts): every
// process can present it, none keeps it.

import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import * as v from 'valibot';
import { derivedKey } from '../accounts/keys.js';
import { GatewayError } from '../errors.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import type { Router } from '../server/router.js';
import { isStoreOutage } from '../store/outage.js';
import { gatewaySecret } from '../store/secrets.js';
import { DashboardError, renderDashboardError } from './errors.js';
import { checkQueryText, PREFIX, readJson } from './http.js';
import { LIMITS, parseBody } from './schemas.js';
import { requireSession } from './sessions.js';

export const PLAYGROUND_LIMITS = { prompt: 8000, maxTokens: 4096, defaultMaxTokens: 512, rpm: 20 } as const;
/** Users whose playground key this process remembers; past it, it forgets them all and reads again. */
const REMEMBERED = 10_000;

export const PlaygroundBody = v.object(
  {
    model: v.pipe(
      v.string('must be a string'),
      v.nonEmpty('must not be empty'),
      v.maxLength(LIMITS.model, `must be at most ${LIMITS.model} characters`),
      v.description('A catalogue model id'),
    ),
    prompt: v.pipe(
      v.string('must be a string'),
      v.nonEmpty('must not be empty'),
      v.maxLength(PLAYGROUND_LIMITS.prompt, `must be at most ${PLAYGROUND_LIMITS.prompt} characters`),
    ),
    max_tokens: v.optional(
      v.pipe(
        v.number('must be a whole number'),
        v.safeInteger('must be a whole number'),
        v.minValue(1, 'must be at least 1'),
        v.maxValue(PLAYGROUND_LIMITS.maxTokens, `must be at most ${PLAYGROUND_LIMITS.maxTokens}`),
        v.metadata({ jsonSchema: { default: PLAYGROUND_LIMITS.defaultMaxTokens } }),
      ),
    ),
  },
  'must be a JSON object',
);

/** Where this process listens, known once it does; loopback when it listens on every address. */
export interface SelfAddress {
  host: string;
  port: number;
}

/** The inference surface's refusals, in the dashboard's codes. */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request',
  402: 'insufficient_balance',
  404: 'not_found',
  413: 'request_too_large',
  429: 'too_many_attempts',
  502: 'model_failed',
  503: 'unavailable',
  504: 'timeout',
};

/**
 * A refusal of the inner request as this API's status and code. Its key was minted a moment
 * ago, so a 401 means the gateway itself is not right: the caller may retry later.
 */
function refusalOf(status: number, code: string | undefined): [number, string] {
  if (status === 401) return [503, 'unavailable'];
  if (code === 'model_unavailable') return [503, 'model_unavailable'];
  if (CODE_BY_STATUS[status]) return [status, CODE_BY_STATUS[status]];
  return status >= 500 ? [502, 'model_failed'] : [400, 'invalid_request'];
}

export function registerPlayground(router: Router, gw: Gateway, self: SelfAddress): void {
  const remembered = new Map<string, string>();

  /** The user's playground key: the live one, or a new one when there is none (first use, or all their keys revoked). */
  async function playgroundKey(userId: string): Promise<string> {
    const known = remembered.get(userId);
    if (known) return known;
    const secret = await gatewaySecret(gw.sql, 'playground-keys');
    const live = () =>
      gw.sql<{ id: string }[]>`SELECT id FROM api_keys WHERE user_id = ${userId} AND ephemeral AND revoked_at IS NULL`;
    let [row] = await live();
    if (!row) {
      const id = randomUUID();
      const { hash, prefix } = derivedKey(secret, id);
      // Two processes making it at once: the unique index keeps one, and both read it back.
      await gw.sql`
        INSERT INTO api_keys (id, user_id, name, key_hash, prefix, rpm_limit, ephemeral)
        VALUES (${id}, ${userId}, 'playground', ${hash}, ${prefix}, ${PLAYGROUND_LIMITS.rpm}, true)
        ON CONFLICT DO NOTHING`;
      [row] = await live();
    }
    const { key } = derivedKey(secret, row!.id);
    if (remembered.size >= REMEMBERED) remembered.clear();
    remembered.set(userId, key);
    return key;
  }

  async function handle(ex: Exchange): Promise<void> {
    checkQueryText(ex.rawQuery);
    const raw = readJson(ex);
    const { userId } = await requireSession(gw, ex);
    const body = parseBody(PlaygroundBody, await raw);
    // The inner request takes this one's id, so the x-request-id the page gets names the record.
    const requestId = ex.requestId;
    const abort = new AbortController();
    const untie = ex.onAbort(() => abort.abort());
    try {
      const host = self.host.includes(':') ? `[${self.host}]` : self.host;
      const send = async () =>
        request(`http://${host}:${self.port}/v1/chat/completions`, {
          method: 'POST',
          signal: abort.signal,
          headers: {
            authorization: `Bearer ${await playgroundKey(userId)}`,
            'content-type': 'application/json',
            'x-request-id': requestId,
          },
          body: JSON.stringify({
            model: body.model,
            max_tokens: body.max_tokens ?? PLAYGROUND_LIMITS.defaultMaxTokens,
            stream: true,
            stream_options: { include_usage: true },
            messages: [{ role: 'user', content: body.prompt }],
          }),
        });
      let res = await send();
      if (res.statusCode === 401) {
        // The key this process remembered was revoked since (by an admin, with the user's keys): a new one.
        await res.body.dump();
        remembered.delete(userId);
        res = await send();
      }
      if (res.statusCode !== 200) {
        const text = await res.body.text();
        let message = `The model answered ${res.statusCode}.`;
        let innerCode: string | undefined;
        try {
          const error = (JSON.parse(text) as { error?: { message?: string; code?: string } }).error;
          message = error?.message ?? message;
          innerCode = error?.code;
        } catch {
          // not JSON: keep the status
        }
        const retry = Number(res.headers['retry-after']);
        const [status, code] = refusalOf(res.statusCode, innerCode);
        throw new DashboardError(status, code, message, Number.isFinite(retry) && retry > 0 ? retry : undefined);
      }
      ex.beginStream(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
      for await (const chunk of res.body) {
        if (!ex.write(chunk as Buffer)) await ex.whenWritable();
      }
      ex.end();
    } finally {
      untie();
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
        if (isStoreOutage(err))
          throw new DashboardError(503, 'unavailable', 'The service is temporarily unavailable; try again shortly.');
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
