// POST /v1/messages/count_tokens: exact from an Anthropic upstream that offers it, otherwise
// the tokenizer's count. Never charged, but it reaches the upstream with the operator's key, so
// it needs a positive balance and counts against the key's requests per minute.

import { countRequestTokens } from '../billing/tokens.js';
import { GatewayError } from '../errors.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import { authenticatedJson, findModel } from './handle.js';
import { MESSAGES } from './surfaces.js';
import { anthropicHeaders } from './anthropic-headers.js';

export async function handleCountTokens(gw: Gateway, ex: Exchange): Promise<void> {
  const { body } = await authenticatedJson(gw, ex, MESSAGES, (id) => gw.ledger.gate(id));
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  const withBudget = { max_tokens: 1, ...(body as Record<string, unknown>) };
  const ir = MESSAGES.dialect.parseRequest(withBudget);
  const model = findModel(gw, ir.model);
  const upstreamHeaders = anthropicHeaders(ex.headers, model, gw.config);
  for (const route of gw.routes.order(model)) {
    const p = route.provider;
    const key = p.apiKeyEnv ? process.env[p.apiKeyEnv] : undefined;
    if (p.dialect !== 'anthropic' || (p.apiKeyEnv && !key)) continue;
    const { max_tokens: _drop, ...forward } = { ...(body as Record<string, unknown>), model: route.model } as Record<string, unknown>;
    const headers: Record<string, string> = { 'content-type': 'application/json', 'anthropic-version': upstreamHeaders.version };
    if (key) headers['x-api-key'] = key;
    if (upstreamHeaders.betas) headers['anthropic-beta'] = upstreamHeaders.betas;
    try {
      const res = await fetch(`${p.baseUrl}/v1/messages/count_tokens`, { method: 'POST', headers, body: JSON.stringify(forward), signal: AbortSignal.timeout(gw.config.UPSTREAM_FIRST_BYTE_TIMEOUT_MS) });
      if (res.ok) {
        const json = (await res.json()) as { input_tokens?: unknown };
        if (typeof json.input_tokens === 'number') {
          ex.json(200, { input_tokens: json.input_tokens }, { 'request-id': ex.requestId });
          return;
        }
      }
    } catch (err) {
      gw.log.warn({ err: (err as Error).message, route: route.key }, 'count_tokens upstream failed; estimating');
    }
  }
  // request-id as on Anthropic's own answers (the SDK reads it), like /v1/messages.
  ex.json(200, { input_tokens: await countRequestTokens(ir) }, { 'request-id': ex.requestId });
}
