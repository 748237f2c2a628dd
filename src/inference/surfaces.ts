// The two inference surfaces: which dialect each speaks, how it takes the key, how its ids look.

import { bearer, randomBase62 } from '../wire.js';
import type { Dialect } from '../dialects/dialect.js';
import { DIALECTS } from '../dialects/index.js';
import type { GatewayError } from '../errors.js';
import type { Exchange } from '../server/exchange.js';

export interface Surface {
  name: 'chat' | 'messages';
  dialect: Dialect;
  /** The service key as this surface's clients send it. */
  key(ex: Exchange): string | undefined;
  newId(): string;
  renderError(ex: Exchange, err: GatewayError): void;
}

function renderWith(dialect: Dialect, extra: (ex: Exchange) => Record<string, string>) {
  return (ex: Exchange, err: GatewayError) => {
    const { status, body } = dialect.errorResponse(err, ex.requestId);
    const headers = extra(ex);
    if (err.retryAfter !== undefined) headers['retry-after'] = String(err.retryAfter);
    if (err.noRetry) headers['x-should-retry'] = 'false';
    ex.json(status, body, headers);
  };
}

export const CHAT: Surface = {
  name: 'chat',
  dialect: DIALECTS.openai,
  key: (ex) => bearer(ex.headers.authorization),
  newId: () => `chatcmpl-${randomBase62(29)}`,
  renderError: renderWith(DIALECTS.openai, () => ({})),
};

export const MESSAGES: Surface = {
  name: 'messages',
  dialect: DIALECTS.anthropic,
  // Older SDKs send x-api-key, recent ones Authorization: Bearer (API.md §1).
  key: (ex) => ex.headers['x-api-key']?.trim() || bearer(ex.headers.authorization),
  newId: () => `msg_${randomBase62(24)}`,
  renderError: renderWith(DIALECTS.anthropic, (ex) => ({ 'request-id': ex.requestId })),
};
