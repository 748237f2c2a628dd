// The stages every billed inference surface composes (chat, Messages, Responses, Gemini, the
// WebSocket's turns through handleInference, embeddings), and the cheap checks count_tokens and
// the state routes share. Each is a plain async function of the request, in the order a request
// meets them (docs/architecture.md, "One request"):
//
//   billed(gw, ex, surface, admit, serve)      the request line, released holds, the log line
//     fundedJson / authenticatedBody           key, balance (or gate), body shape, parse
//     findModelOfKind                          the catalogue
//     reserveHold                              the worst case, held
//     serve → gw.routes.forward                the upstream call, through the pool, with fallback
//
// A surface's own work (its terms, its answer) sits between them in its module.

import type { KeyIdentity } from '../accounts/keys.js';
import type { Reservation } from '../billing/reservation.js';
import type { BodySize } from '../billing/prompt-size.js';
import type { Model, ModelKind } from '../catalogue/index.js';
import { GatewayError } from '../errors.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import { checkBodyShape, parseJsonBody } from './body-guard.js';
import { logRequest, RequestLine } from './request-log.js';
import type { Surface } from './surfaces.js';

/**
 * One billed request: `admit` (which reserves) then `serve`; a hold nothing settled is released
 * (refused or failed before any answer: nothing was used; with the store down the release is
 * retried, and the hold expires by itself after RESERVATION_TTL_MS); one log line either way.
 */
export async function billed<J extends { reservation: Reservation }>(
  gw: Gateway,
  ex: Exchange,
  surface: string,
  admit: (line: RequestLine) => Promise<J>,
  serve: (job: J) => Promise<void>,
): Promise<void> {
  const line = new RequestLine();
  try {
    const job = await admit(line);
    try {
      await serve(job);
    } finally {
      if (!job.reservation.settled) await gw.ledger.release(job.reservation);
    }
  } catch (err) {
    logRequest(gw, ex, surface, line, err);
    throw err;
  }
  logRequest(gw, ex, surface, line);
}

/** Key and balance checked (the line learns whose request it is), then the body read and parsed. */
export function fundedJson(gw: Gateway, ex: Exchange, surface: Surface, line: RequestLine) {
  return authenticatedJson(gw, ex, surface, (id) => {
    line.userId = id.userId;
    line.keyId = id.keyId;
    return gw.ledger.precheck(id);
  });
}

/** The request's worst case held; a refusal for want of balance is counted. */
export async function reserveHold(gw: Gateway, identity: KeyIdentity, hold: bigint): Promise<Reservation> {
  try {
    return await gw.ledger.reserve(identity, hold);
  } catch (err) {
    if (err instanceof GatewayError && err.kind === 'insufficient_balance') gw.metrics.reservationRefusals.inc();
    throw err;
  }
}

export async function authenticate(gw: Gateway, ex: Exchange, surface: Surface): Promise<KeyIdentity> {
  const key = surface.key(ex);
  if (!key) throw new GatewayError('authentication', surface.missingKey, { code: 'invalid_api_key' });
  const identity = await gw.keys.resolve(key).catch((err) => {
    gw.log.error({ err }, 'key lookup failed');
    throw new GatewayError('unavailable', 'The gateway cannot check keys right now; try again shortly.');
  });
  if (!identity)
    throw new GatewayError('authentication', 'Invalid API key: it is unknown or has been revoked.', {
      code: 'invalid_api_key',
    });
  return identity;
}

/** Bodies larger than this wait for the cheap checks before they are read. */
const HELD_BODY_BYTES = 64 * 1024;

/** The body's length as its request declares it (0 without a Content-Length). */
export function declaredBodyBytes(ex: Exchange): number {
  const n = Number(ex.headers['content-length']);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/**
 * The cheap checks first: the key, then (for calls that need money) the balance, while the
 * body arrives (uWS wants its reader attached synchronously); only then is the body's shape
 * checked and the body parsed. A zero-balance key costs a cached lookup, not a parse.
 */
export async function authenticatedJson(
  gw: Gateway,
  ex: Exchange,
  surface: Surface,
  needsFunds: (identity: KeyIdentity) => Promise<void>,
): Promise<{ identity: KeyIdentity; body: unknown; size: BodySize }> {
  const { identity, raw, size } = await authenticatedBody(gw, ex, surface, needsFunds);
  let body: unknown;
  try {
    body = await parseJsonBody(raw);
  } catch {
    throw new GatewayError('invalid_request', 'The request body is not valid JSON.', { code: 'invalid_json' });
  }
  return { identity, body, size };
}

/** The same checks, with the body's bytes left unparsed (count_tokens parses them in the tokenizer's thread). */
export async function authenticatedBody(
  gw: Gateway,
  ex: Exchange,
  surface: Surface,
  needsFunds: (identity: KeyIdentity) => Promise<void>,
): Promise<{ identity: KeyIdentity; raw: Buffer; size: BodySize }> {
  const bodyPromise = ex.readBody(gw.config.MAX_BODY_BYTES);
  bodyPromise.catch(() => {});
  // A large body waits in the socket while the checks run: refused, it is never read.
  if (declaredBodyBytes(ex) > HELD_BODY_BYTES) ex.pauseBody();
  const identity = await authenticate(gw, ex, surface);
  try {
    await needsFunds(identity);
  } catch (err) {
    // A key refused for its balance or its rate and asking again at once is tarpitted.
    if (err instanceof GatewayError) await gw.admission.refused(identity.keyId, err);
    throw err;
  }
  ex.resumeBody();
  const raw = await bodyPromise;
  const containers = await checkBodyShape(raw, {
    maxDepth: gw.config.MAX_JSON_DEPTH,
    maxContainers: gw.config.MAX_JSON_CONTAINERS,
  });
  return { identity, raw, size: { bytes: raw.length, containers } };
}

export function findModel(gw: Gateway, id: string): Model {
  const model = gw.catalogue.current.models.get(id);
  if (!model) {
    throw new GatewayError(
      'not_found',
      `The model "${id}" does not exist. GET /v1/models lists the available models.`,
      {
        param: 'model',
        code: 'model_not_found',
      },
    );
  }
  return model;
}

/**
 * A model of the kind the route serves. The other kind is the client's mistake, worded with the
 * route that serves it: a chat model has no vectors to give, an embedding model no text.
 */
export function findModelOfKind(gw: Gateway, id: string, kind: ModelKind): Model {
  const model = findModel(gw, id);
  if (model.kind === kind) return model;
  const message =
    model.kind === 'embedding'
      ? `The model "${id}" is an embedding model: call POST /v1/embeddings with it. GET /v1/models lists each model's kind.`
      : `The model "${id}" is a chat model, not an embedding model: POST /v1/embeddings takes models of kind "embedding" (GET /v1/models lists each model's kind).`;
  throw new GatewayError('invalid_request', message, { param: 'model', code: 'model_not_supported' });
}
