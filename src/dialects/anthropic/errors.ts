// Error envelopes of the messages surface, and reading Anthropic's own error bodies.

import type { ErrorKind, GatewayError } from '../../errors.js';
import { encodeSSE } from '../../stream/sse.js';

/** Anthropic `error.type` and status per kind (API.md §1). */
const ENVELOPE: Record<ErrorKind, { status: number; type: string }> = {
  invalid_request: { status: 400, type: 'invalid_request_error' },
  authentication: { status: 401, type: 'authentication_error' },
  insufficient_balance: { status: 402, type: 'billing_error' },
  permission: { status: 403, type: 'permission_error' },
  not_found: { status: 404, type: 'not_found_error' },
  too_large: { status: 413, type: 'request_too_large' },
  rate_limit: { status: 429, type: 'rate_limit_error' },
  upstream: { status: 502, type: 'api_error' },
  // 529 is what the Anthropic SDK and its users expect for "overloaded"; the chat surface says 503.
  overloaded: { status: 529, type: 'overloaded_error' },
  // API.md decides api_error here, although Anthropic itself has a timeout_error type.
  timeout: { status: 504, type: 'api_error' },
  unavailable: { status: 503, type: 'api_error' },
};

export function anthropicErrorType(kind: ErrorKind): string {
  return ENVELOPE[kind].type;
}

export function anthropicStatus(kind: ErrorKind): number {
  return ENVELOPE[kind].status;
}

/** The envelope as Anthropic sends it inside a stream, where it usually has no request_id. */
export function errorPayload(kind: ErrorKind, message: string) {
  return { type: 'error', error: { type: anthropicErrorType(kind), message } };
}

export function errorBody(err: GatewayError, requestId: string) {
  return { ...errorPayload(err.kind, err.message), request_id: requestId };
}

export function errorResponse(err: GatewayError, requestId: string): { status: number; body: unknown } {
  return { status: anthropicStatus(err.kind), body: errorBody(err, requestId) };
}

export function errorEvent(err: GatewayError, requestId: string): Buffer {
  return encodeSSE(JSON.stringify(errorBody(err, requestId)), 'error');
}

/**
 * The kind of an upstream's in-stream error. Only the two the router can act on (back off, try
 * elsewhere) are told apart; everything else is the upstream failing.
 */
export function kindFromAnthropicType(type: unknown): ErrorKind {
  if (type === 'overloaded_error') return 'overloaded';
  if (type === 'rate_limit_error') return 'rate_limit';
  return 'upstream';
}

export function upstreamErrorMessage(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const error = (body as { error?: unknown }).error;
  if (error === null || typeof error !== 'object') return undefined;
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && message !== '' ? message : undefined;
}
