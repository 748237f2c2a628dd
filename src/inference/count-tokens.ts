// POST /v1/messages/count_tokens: exact from an Anthropic upstream that offers it, otherwise
// the tokenizer's count. Never charged, but it reaches the upstream with the operator's key, so
// it needs a positive balance and counts against the key's requests per minute; and since
// nothing bills it, the key's share of unbilled work bounds it (./admission.ts): a local count is
// cheap per character, but a request may carry millions of them.

import { countRequestTokens } from '../billing/tokens.js';
import { TokenizerRefused } from '../billing/tokenizer/pool.js';
import { GatewayError } from '../errors.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import { DIALECTS } from '../dialects/index.js';
import type { SurfaceCall } from '../dialects/dialect.js';
import type { IRRequest } from '../dialects/ir.js';
import type { Admitted } from './admission.js';
import { authenticatedJson, declaredBodyBytes, findModel } from './handle.js';
import { MESSAGES, type Surface } from './surfaces.js';

/** Messages' count_tokens, or the count of a surface that has one in its URL (Gemini's countTokens). */
export async function handleCountTokens(gw: Gateway, ex: Exchange, surface: Surface = MESSAGES, call?: SurfaceCall): Promise<void> {
  let admitted: Admitted | undefined;
  try {
    const { body, size } = await authenticatedJson(gw, ex, surface, async (id) => {
      await gw.ledger.gate(id);
      // Before the body is read: a refusal costs its sender nothing but the answer.
      admitted = await gw.admission.enter(id.keyId, declaredBodyBytes(ex));
    });
    // A body without a length (chunked) is counted once it is in.
    await admitted!.take(size.bytes - declaredBodyBytes(ex));
    if (surface === MESSAGES) await countTokensFor(gw, ex, body);
    else await countOwnTokens(gw, ex, surface, body, call);
  } finally {
    admitted?.leave();
  }
}

async function countTokensFor(gw: Gateway, ex: Exchange, body: unknown): Promise<void> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  const withBudget = { max_tokens: 1, ...(body as Record<string, unknown>) };
  const ir = MESSAGES.dialect.parseRequest(withBudget);
  const model = findModel(gw, ir.model);
  const forwarded = MESSAGES.forwardHeaders?.(ex.headers, model, gw.config);
  for (const route of gw.routes.order(model)) {
    const p = route.provider;
    const key = p.apiKeyEnv ? process.env[p.apiKeyEnv] : undefined;
    // The body is forwarded as the client wrote it: only to a vendor of the client's dialect.
    const { upstream } = DIALECTS[p.dialect];
    if (DIALECTS[p.dialect] !== MESSAGES.dialect || !upstream.countTokensEndpoint || (p.apiKeyEnv && !key)) continue;
    const { max_tokens: _drop, ...forward } = { ...(body as Record<string, unknown>), model: route.model } as Record<string, unknown>;
    const headers = { 'content-type': 'application/json', ...upstream.headers(key, forwarded, gw.config) };
    try {
      const res = await fetch(upstream.countTokensEndpoint(p.baseUrl), { method: 'POST', headers, body: JSON.stringify(forward), signal: AbortSignal.timeout(gw.config.UPSTREAM_FIRST_BYTE_TIMEOUT_MS) });
      if (res.ok) {
        const json = (await res.json()) as { input_tokens?: unknown };
        if (typeof json.input_tokens === 'number') {
          ex.json(200, { input_tokens: json.input_tokens }, MESSAGES.answerHeaders(ex.requestId));
          return;
        }
      }
    } catch (err) {
      gw.log.warn({ err: (err as Error).message, route: route.key }, 'count_tokens upstream failed; estimating');
    }
  }
  // request-id as on Anthropic's own answers (the SDK reads it), like /v1/messages.
  ex.json(200, { input_tokens: await localCount(ir) }, MESSAGES.answerHeaders(ex.requestId));
}

/** Another surface's count: the tokenizer's, in that surface's answer. */
async function countOwnTokens(gw: Gateway, ex: Exchange, surface: Surface, body: unknown, call: SurfaceCall | undefined): Promise<void> {
  const ir = surface.dialect.parseRequest(body, call);
  findModel(gw, ir.model);
  ex.json(200, surface.countAnswer!(await localCount(ir)), surface.answerHeaders(ex.requestId));
}

async function localCount(ir: IRRequest): Promise<number> {
  try {
    return await countRequestTokens(ir, { refusable: true });
  } catch (err) {
    if (!(err instanceof TokenizerRefused)) throw err;
    // Refused rather than answered by an upper bound: a client asks to know a count, and a
    // number several times too high, which it cannot tell from a real one, is worse than no answer.
    throw err.reason === 'too_large' ? new GatewayError('too_large', err.message) : new GatewayError('overloaded', err.message, { retryAfter: 1 });
  }
}
