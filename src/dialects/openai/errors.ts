// The chat surface's error envelope (API.md §1), and reading an OpenAI-dialect upstream's.

import type { ErrorKind, GatewayError } from '../../errors.js';
import { encodeSSE } from '../../stream/sse.js';
import { isRecord } from './shared.js';

const TYPE_AND_CODE: Record<ErrorKind, { type: string; code: string | null }> = {
  invalid_request: { type: 'invalid_request_error', code: null },
  authentication: { type: 'authentication_error', code: 'invalid_api_key' },
  insufficient_balance: { type: 'insufficient_quota', code: 'insufficient_balance' },
  permission: { type: 'permission_error', code: null },
  not_found: { type: 'invalid_request_error', code: 'model_not_found' },
  too_large: { type: 'invalid_request_error', code: 'request_too_large' },
  // API.md leaves the code open; OpenAI's own 429s say rate_limit_exceeded.
  rate_limit: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
  upstream: { type: 'upstream_error', code: null },
  overloaded: { type: 'overloaded', code: null },
  timeout: { type: 'timeout', code: null },
  unavailable: { type: 'service_unavailable', code: null },
};

export function errorBody(kind: ErrorKind, message: string, param?: string | null, code?: string | null) {
  const defaults = TYPE_AND_CODE[kind];
  return { error: { message, type: defaults.type, param: param ?? null, code: code ?? defaults.code } };
}

// The request id travels in the x-request-id header; OpenAI's envelope has no slot for it.
export function errorResponse(err: GatewayError, _requestId: string): { status: number; body: unknown } {
  return { status: err.status, body: errorBody(err.kind, err.message, err.param, err.code) };
}

export function errorEvent(err: GatewayError, _requestId: string): Buffer {
  return encodeSSE(JSON.stringify(errorBody(err.kind, err.message, err.param, err.code)));
}

/** `error.message` of an OpenAI error body; some compatible servers send `{"error": "text"}`. */
export function upstreamErrorMessage(body: unknown): string | undefined {
  let value = body;
  if (typeof value === 'string' || Buffer.isBuffer(value)) {
    try {
      value = JSON.parse(value.toString());
    } catch {
      return undefined;
    }
  }
  if (!isRecord(value)) return undefined;
  const err = value.error;
  if (typeof err === 'string' && err !== '') return err;
  if (isRecord(err) && typeof err.message === 'string' && err.message !== '') return err.message;
  return undefined;
}
