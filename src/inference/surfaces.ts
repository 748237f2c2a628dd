// The inference surfaces the gateway serves: one per registered dialect that has a surface
// (its `ClientSide`), bound to its dialect, with the error rendering every route of it shares.

import type { ClientSide, Dialect } from '../dialects/dialect.js';
import { DIALECTS, type DialectName } from '../dialects/index.js';
import type { GatewayError } from '../errors.js';
import { responsesState } from '../responses/state.js';
import type { Exchange } from '../server/exchange.js';
import type { SurfaceState } from './state.js';

export interface Surface extends ClientSide {
  dialect: Dialect;
  renderError(ex: Exchange, err: GatewayError): void;
  /** Server-side conversation state, for the surfaces that have it. */
  state?: SurfaceState;
}

/**
 * Surfaces with state kept by the gateway, by dialect. Not declared in the dialect's folder: the
 * state is the gateway's (its store, its WebSocket and compaction routes through src/server), and a
 * dialect imports none of that (the registry is loaded in the tokenizer's worker threads too).
 */
const STATE: Partial<Record<DialectName, SurfaceState>> = { responses: responsesState };

function served(dialect: Dialect, surface: ClientSide): Surface {
  return {
    ...surface,
    dialect,
    state: STATE[dialect.name],
    renderError(ex, err) {
      const { status, body } = dialect.errorResponse(err, ex.requestId);
      const headers = surface.answerHeaders(ex.requestId);
      if (err.retryAfter !== undefined) headers['retry-after'] = String(err.retryAfter);
      if (err.noRetry) headers['x-should-retry'] = 'false';
      ex.json(status, body, headers);
    },
  };
}

export const SURFACES: readonly Surface[] = Object.values(DIALECTS).flatMap((d: Dialect) =>
  d.surface ? [served(d, d.surface)] : [],
);

const surfaceOf = (dialect: Dialect) => SURFACES.find((s) => s.dialect === dialect)!;

/** The two surfaces that /v1/models and count_tokens answer for (OpenAI's and Anthropic's). */
export const CHAT = surfaceOf(DIALECTS.openai);
export const MESSAGES = surfaceOf(DIALECTS.anthropic);
