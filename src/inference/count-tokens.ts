// POST /v1/messages/count_tokens: exact from an Anthropic upstream that offers it, otherwise
// the tokenizer's count. Never charged, but it reaches the upstream with the operator's key, so
// it needs a positive balance and counts against the key's requests per minute; and since
// nothing bills it, the key's share of unbilled work bounds it (./admission.ts): a local count is
// cheap per character, but a request may carry millions of them.

import { isNoKey } from '../upstream/provider-keys.js';
import { countRequestBody, TokenizerRefused } from '../billing/tokenizer/pool.js';
import type { RequestCount } from '../billing/tokenizer/request.js';
import { GatewayError } from '../errors.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import { DIALECTS, dialectName } from '../dialects/index.js';
import type { SurfaceCall } from '../dialects/dialect.js';
import type { Admitted } from './admission.js';
import { authenticatedBody, declaredBodyBytes, findModel } from './pipeline.js';
import { MESSAGES, type Surface } from './surfaces.js';

/** Messages' count_tokens, or the count of a surface that has one in its URL (Gemini's countTokens). */
export async function handleCountTokens(
  gw: Gateway,
  ex: Exchange,
  surface: Surface = MESSAGES,
  call?: SurfaceCall,
): Promise<void> {
  let admitted: Admitted | undefined;
  try {
    const { raw, size } = await authenticatedBody(gw, ex, surface, async (id) => {
      await gw.ledger.gate(id);
      // Before the body is read: a refusal costs its sender nothing but the answer.
      admitted = await gw.admission.enter(id.keyId, declaredBodyBytes(ex));
    });
    // A body without a length (chunked) is counted once it is in.
    await admitted!.take(size.bytes - declaredBodyBytes(ex));
    const counted = await countInThread(raw, surface, call);
    const model = findModel(gw, counted.model);
    const tokens = (surface === MESSAGES ? await vendorCount(gw, ex, model, counted) : undefined) ?? counted.tokens;
    // request-id as on Anthropic's own answers (the SDK reads it), like /v1/messages.
    ex.json(
      200,
      surface === MESSAGES ? { input_tokens: tokens } : surface.countAnswer!(tokens),
      surface.answerHeaders(ex.requestId),
    );
  } finally {
    admitted?.leave();
  }
}

/**
 * The tokenizer's count, and the model asked for, from the body's bytes: decoded, parsed and
 * counted in its thread, so that megabytes of text never hold this loop.
 */
async function countInThread(raw: Buffer, surface: Surface, call: SurfaceCall | undefined): Promise<RequestCount> {
  const messages = surface === MESSAGES;
  try {
    return await countRequestBody({
      body: raw,
      dialect: dialectName(surface.dialect),
      call,
      // Messages' parse wants a budget; a count request has none, and a vendor's count refuses one.
      defaults: messages ? { max_tokens: 1 } : undefined,
      forwardWithout: messages ? ['max_tokens'] : undefined,
    });
  } catch (err) {
    if (!(err instanceof TokenizerRefused)) throw err;
    // Refused rather than answered by an upper bound: a client asks to know a count, and a
    // number several times too high, which it cannot tell from a real one, is worse than no answer.
    throw new GatewayError('overloaded', err.message, { retryAfter: 1 });
  }
}

/**
 * The exact count from an Anthropic upstream that offers one, when the model has such a route
 * with its key: the body is forwarded as the client wrote it, with the route's model name.
 * Undefined when there is none or it did not answer.
 */
async function vendorCount(
  gw: Gateway,
  ex: Exchange,
  model: ReturnType<typeof findModel>,
  counted: RequestCount,
): Promise<number | undefined> {
  const forwarded = MESSAGES.forwardHeaders?.(ex.headers, model, gw.config);
  const rest = counted.forward!;
  for (const route of gw.routes.order(model)) {
    const p = route.provider;
    const picked = gw.routes.keys.pick(p);
    // Only to a vendor of the client's dialect.
    const { upstream } = DIALECTS[p.dialect];
    if (DIALECTS[p.dialect] !== MESSAGES.dialect || !upstream.countTokensEndpoint || isNoKey(picked)) continue;
    const key = picked.value;
    // `rest` is the body's object without `model`: the route's name goes first.
    const tail = Buffer.from(rest.buffer, rest.byteOffset, rest.byteLength).subarray(
      rest.length > 2 ? 1 : rest.length - 1,
    );
    const body = `{"model":${JSON.stringify(route.model)}${rest.length > 2 ? ',' : ''}${tail.toString('utf8')}`;
    const headers = { 'content-type': 'application/json', ...upstream.headers(key, forwarded, gw.config) };
    try {
      // Through the gateway's pool, as every upstream call: its keep-alive connections and its
      // time-outs (UPSTREAM_FIRST_BYTE_TIMEOUT_MS to the answer's head).
      const res = await gw.routes.client.post(upstream.countTokensEndpoint(p.baseUrl), headers, body);
      const text = await res.body.text();
      if (res.status < 300) {
        const json = JSON.parse(text) as { input_tokens?: unknown };
        if (typeof json.input_tokens === 'number') return json.input_tokens;
      }
    } catch (err) {
      gw.log.warn({ err: (err as Error).message, route: route.key }, 'count_tokens upstream failed; estimating');
    }
  }
  return undefined;
}
