// Tries a model's routes in order. A route that fails before answering (connect error,
// time-out to first byte, 429, 5xx, or a refusal of the gateway's own credentials) hands
// over to the next one and cools down for a while. Once a route answers, it is the answer:
// nothing is retried after bytes could have reached the client.

import type { Logger } from 'pino';
import { GatewayError, type ErrorKind } from '../errors.js';
import type { Model, Route } from '../catalogue/index.js';
import type { Metrics } from '../server/metrics.js';
import type { FailureCause, RouteHealth } from './health.js';
import type { Cancel } from './cancel.js';
import { isInvalidRequest, isTimeout, type UpstreamClient, type UpstreamResponse } from './client.js';
import { sanitizeUpstreamMessage } from './sanitize.js';
import { isNoKey, type PickedKey, type ProviderKeys } from './provider-keys.js';

export interface UpstreamCall {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface Answer {
  route: Route;
  response: UpstreamResponse;
  /** The provider key the call carried: a dialect's own refusal of it (Gemini's 400) is told with it. */
  key: PickedKey;
}

interface Failure {
  kind: ErrorKind;
  message: string;
  retryAfter?: number;
  /** The operator's to fix (a provider key missing or refused): the client is told only that the model is unavailable. */
  operator?: boolean;
}

/** How often one provider's missing or refused key is logged at error level. */
const CREDENTIALS_LOG_MS = 60_000;

/** What the client is told when every route failed for want of a working provider key. */
export const modelUnavailable = (modelId: string) =>
  new GatewayError(
    'unavailable',
    `The model "${modelId}" is unavailable right now. GET /v1/models lists the models; another one may serve you.`,
    { code: 'model_unavailable', noRetry: true },
  );

/** Statuses after which another route may well succeed. */
const FALLBACK_STATUSES = new Set([401, 403, 404, 408, 409, 425, 429]);

export class RouteSelector {
  private readonly coolUntil = new Map<string, number>();
  private readonly credentialsLogged = new Map<string, number>();

  constructor(
    /** The pool every upstream call goes through. */
    readonly client: UpstreamClient,
    private readonly cooldownMs: number,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    /** Per-route counts for the admin's health page (./health.ts). */
    private readonly health: RouteHealth | undefined,
    /** The key each call carries (./provider-keys.ts). */
    readonly keys: ProviderKeys,
  ) {}

  /**
   * Routes not cooling down first (in catalogue order), then the cooling ones as a last resort.
   * A model with weights has its first warm route drawn by them.
   */
  order(model: Model): Route[] {
    const now = Date.now();
    const warm: Route[] = [];
    const cool: Route[] = [];
    for (const r of model.routes) ((this.coolUntil.get(r.key) ?? 0) > now ? cool : warm).push(r);
    if (model.weighted && warm.length > 1) drawFirst(warm);
    return warm.concat(cool);
  }

  async forward(
    model: Model,
    build: (route: Route, key: string | undefined) => UpstreamCall,
    cancel?: Cancel,
  ): Promise<Answer> {
    const failures: Failure[] = [];
    for (const route of this.order(model)) {
      if (cancel?.cancelled) break;
      const key = this.keys.pick(route.provider);
      if (isNoKey(key)) {
        this.health?.attempt(route.key, false, 0, 'no_key');
        this.metrics.upstream.inc({ route: route.key, outcome: 'no_key' });
        this.credentialsFailed(route, key.missing);
        failures.push({ kind: 'unavailable', message: '', operator: true });
        continue;
      }
      const call = build(route, key.value);
      let response: UpstreamResponse;
      const started = performance.now();
      try {
        response = await this.client.post(call.url, call.headers, call.body, cancel);
      } catch (err) {
        if (cancel?.cancelled) throw err;
        // The request itself could not be sent (an invalid header value, say): the client's
        // mistake, the same on every route; no route is to blame or to cool down.
        if (isInvalidRequest(err))
          throw new GatewayError(
            'invalid_request',
            'The request could not be sent upstream as it is (an invalid header or value).',
          );
        const timeout = isTimeout(err);
        this.health?.attempt(route.key, false, performance.now() - started, timeout ? 'timeout' : 'connect');
        this.fail(route, timeout ? 'timeout' : 'connect_error', err);
        failures.push(
          timeout
            ? { kind: 'timeout', message: 'The upstream did not answer in time.' }
            : { kind: 'upstream', message: 'The upstream could not be reached.' },
        );
        continue;
      }
      if (response.status < 400 || (response.status < 500 && !FALLBACK_STATUSES.has(response.status))) {
        this.metrics.upstream.inc({ route: route.key, outcome: String(response.status) });
        // An answer, even a 4xx the client caused, is the route working.
        this.health?.attempt(route.key, true, performance.now() - started);
        return { route, response, key };
      }
      const refused = response.status === 401 || response.status === 403;
      this.health?.attempt(
        route.key,
        false,
        performance.now() - started,
        refused ? 'key_refused' : causeOfStatus(response.status),
      );
      const text = await response.body.text().catch(() => '');
      this.fail(route, String(response.status), undefined);
      if (refused) {
        this.keyRefused(route, response.status, key);
        failures.push({ kind: 'unavailable', message: '', operator: true });
        continue;
      }
      failures.push(failureFromStatus(response, text));
    }
    throw combine(model, failures);
  }

  /** The vendor refused the provider's key (401, 403, or a refusal of its own such as Gemini's 400). */
  keyRefused(route: Route, status: number, key: PickedKey, afterAnswer = false): void {
    this.keys.refused(key);
    // An answer counted as the route working (Gemini's 400) was this failure after all.
    if (afterAnswer) this.health?.failedAfterAnswer(route.key, 'key_refused');
    const which = key.id
      ? `its key ${key.label}: check it in the console`
      : key.label !== 'none'
        ? `its key from ${key.label}: check it`
        : 'the call (it has no key)';
    this.credentialsFailed(route, `provider "${route.provider.id}" refused ${which} (status ${status})`);
  }

  /**
   * A provider key missing or refused: the operator's to fix, logged at error level naming the
   * provider, once a minute per provider (every request would otherwise log it).
   */
  private credentialsFailed(route: Route, why: string): void {
    const now = Date.now();
    if ((this.credentialsLogged.get(route.provider.id) ?? 0) > now) return;
    this.credentialsLogged.set(route.provider.id, now + CREDENTIALS_LOG_MS);
    this.log.error({ provider: route.provider.id, route: route.key }, `the model cannot be served: ${why}`);
  }

  private fail(route: Route, outcome: string, err: unknown) {
    this.metrics.upstream.inc({ route: route.key, outcome });
    if (this.cooldownMs > 0) {
      this.coolUntil.set(route.key, Date.now() + this.cooldownMs);
      this.health?.cooldown(route.key, Date.now() + this.cooldownMs);
    }
    this.log.warn(
      { route: route.key, outcome, err: err instanceof Error ? err.message : undefined },
      'upstream route failed',
    );
  }
}

/** Moves a route drawn by weight to the front; the others keep their order. All weights 0: as listed. */
function drawFirst(routes: Route[]): void {
  let total = 0;
  for (const r of routes) total += r.weight;
  if (total <= 0) return;
  let at = Math.random() * total;
  const i = routes.findIndex((r) => (at -= r.weight) < 0);
  if (i > 0) routes.unshift(...routes.splice(i, 1));
}

/** What a failed answer's status says went wrong, for the health page. */
function causeOfStatus(status: number): FailureCause {
  if (status === 429) return 'rate_limited';
  if (status === 408 || status === 504) return 'timeout';
  return status >= 500 ? 'server' : 'other';
}

function retryAfterSeconds(headers: UpstreamResponse['headers']): number | undefined {
  const ms = Number(headers['retry-after-ms']);
  if (Number.isFinite(ms) && ms > 0) return Math.ceil(ms / 1000);
  const raw = headers['retry-after'];
  const s = Number(Array.isArray(raw) ? raw[0] : raw);
  return Number.isFinite(s) && s >= 0 ? Math.ceil(s) : undefined;
}

/** The error message inside either vendor's envelope, if the body has one. */
export function errorMessageOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const m =
      typeof body.error === 'object' ? body.error?.message : typeof body.error === 'string' ? body.error : body.message;
    return typeof m === 'string' ? sanitizeUpstreamMessage(m) : undefined;
  } catch {
    return undefined;
  }
}

function failureFromStatus(response: UpstreamResponse, text: string): Failure {
  const s = response.status;
  const detail = errorMessageOf(text);
  if (s === 429)
    return {
      kind: 'rate_limit',
      message: detail ?? 'The upstream is rate limiting requests.',
      retryAfter: retryAfterSeconds(response.headers) ?? 1,
    };
  if (s === 529 || s === 503) return { kind: 'overloaded', message: detail ?? 'The upstream is overloaded.' };
  if (s === 504 || s === 408) return { kind: 'timeout', message: 'The upstream timed out.' };
  if (s === 404) return { kind: 'upstream', message: 'The upstream does not know this model.' };
  return {
    kind: 'upstream',
    message: detail ? `The upstream failed: ${detail}` : `The upstream failed with status ${s}.`,
  };
}

/** One error for the client out of every route's failure: the most telling kind wins. */
function combine(model: Model, tried: Failure[]): GatewayError {
  if (tried.length === 0) return new GatewayError('upstream', 'No upstream route could be tried.');
  // The operator's failures say nothing the client can act on: they count only when they are all there is.
  const failures = tried.filter((f) => !f.operator);
  if (failures.length === 0) return modelUnavailable(model.id);
  const all = (k: ErrorKind) => failures.every((f) => f.kind === k);
  if (all('rate_limit')) {
    const retry = Math.min(...failures.map((f) => f.retryAfter ?? 1));
    return new GatewayError('rate_limit', failures[failures.length - 1].message, { retryAfter: retry });
  }
  const pick = (k: ErrorKind) => failures.find((f) => f.kind === k);
  const f = pick('overloaded') ?? (all('timeout') ? pick('timeout') : undefined) ?? failures[failures.length - 1];
  return new GatewayError(f.kind === 'rate_limit' ? 'upstream' : f.kind, f.message);
}
