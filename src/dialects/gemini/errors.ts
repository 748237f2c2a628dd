// Gemini's error envelope, google.rpc's `{"error":{"code","message","status"}}`, for every gateway
// error, and reading a Gemini upstream's. The envelope has no slot for the gateway's own code or
// request id: the request id travels in `x-request-id`, and the gateway's code (model_not_found,
// insufficient_balance…) goes in `details` as a google.rpc.ErrorInfo, where Google puts its own
// machine-readable reasons.

import type { ErrorKind, GatewayError } from '../../errors.js';
import { markFinal } from '../../stream/sse.js';
import type { RenderContext } from '../dialect.js';
import { isRecord } from '../openai/shared.js';
import { closeArray, isArrayStream } from './framing.js';

/** Status and google.rpc status name per kind. Gemini has no 402: a spent balance is a quota. */
const ENVELOPE: Record<ErrorKind, { code: number; status: string }> = {
  invalid_request: { code: 400, status: 'INVALID_ARGUMENT' },
  authentication: { code: 401, status: 'UNAUTHENTICATED' },
  // 402 as on every surface (API.md), named as Google names an exhausted quota.
  insufficient_balance: { code: 402, status: 'RESOURCE_EXHAUSTED' },
  permission: { code: 403, status: 'PERMISSION_DENIED' },
  not_found: { code: 404, status: 'NOT_FOUND' },
  too_large: { code: 413, status: 'INVALID_ARGUMENT' },
  rate_limit: { code: 429, status: 'RESOURCE_EXHAUSTED' },
  upstream: { code: 502, status: 'INTERNAL' },
  overloaded: { code: 503, status: 'UNAVAILABLE' },
  timeout: { code: 504, status: 'DEADLINE_EXCEEDED' },
  unavailable: { code: 503, status: 'UNAVAILABLE' },
};

/** The gateway's stable codes where the error has none of its own, as the chat surface's envelope gives them. */
const DEFAULT_CODE: Partial<Record<ErrorKind, string>> = {
  authentication: 'invalid_api_key',
  insufficient_balance: 'insufficient_balance',
  not_found: 'model_not_found',
  too_large: 'request_too_large',
  rate_limit: 'rate_limit_exceeded',
};

export function errorBody(kind: ErrorKind, message: string, code?: string | null, param?: string | null) {
  const { code: status, status: name } = ENVELOPE[kind];
  const error: Record<string, unknown> = { code: status, message, status: name };
  const reason = code ?? DEFAULT_CODE[kind];
  if (reason || param) {
    const metadata: Record<string, string> = {};
    if (param) metadata.param = param;
    error.details = [
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: reason ?? kind, domain: 'airouter', metadata },
    ];
  }
  return { error };
}

export function errorResponse(err: GatewayError, _requestId: string): { status: number; body: unknown } {
  return { status: ENVELOPE[err.kind].code, body: errorBody(err.kind, err.message, err.code, err.param) };
}

/** Mid-stream: the envelope as one more chunk (SSE), or as the array's last element. Never followed by anything. */
export function errorEvent(err: GatewayError, _requestId: string, ctx?: RenderContext): Buffer {
  const json = JSON.stringify(errorBody(err.kind, err.message, err.code, err.param));
  if (ctx && isArrayStream(ctx)) return markFinal(closeArray(ctx, json));
  return markFinal(Buffer.from(`data: ${json}\r\n\r\n`));
}

/** The kind of a google.rpc status inside an upstream's stream. */
export function kindOfStatus(status: unknown): ErrorKind {
  if (status === 'RESOURCE_EXHAUSTED') return 'rate_limit';
  if (status === 'UNAVAILABLE') return 'overloaded';
  if (status === 'DEADLINE_EXCEEDED') return 'timeout';
  return 'upstream';
}

export function upstreamErrorMessage(body: unknown): string | undefined {
  let value = body;
  if (Array.isArray(value)) value = value[0];
  if (!isRecord(value) || !isRecord(value.error)) return undefined;
  const m = value.error.message;
  return typeof m === 'string' && m !== '' ? m : undefined;
}
