// One error type for every surface: each dialect renders it in its own envelope
// (see the table in API.md §1), so handlers never build envelopes themselves.

export type ErrorKind =
  | 'invalid_request' // 400
  | 'authentication' // 401
  | 'insufficient_balance' // 402
  | 'permission' // 403
  | 'not_found' // 404
  | 'too_large' // 413
  | 'rate_limit' // 429
  | 'upstream' // 502
  | 'overloaded' // 503 on chat, 529 on messages
  | 'timeout' // 504
  | 'unavailable'; // 503

const STATUS: Record<ErrorKind, number> = {
  invalid_request: 400,
  authentication: 401,
  insufficient_balance: 402,
  permission: 403,
  not_found: 404,
  too_large: 413,
  rate_limit: 429,
  upstream: 502,
  overloaded: 503,
  timeout: 504,
  unavailable: 503,
};

export interface GatewayErrorOptions {
  /** Request field at fault, for OpenAI's `param`. */
  param?: string;
  /** Seconds, sent as `retry-after`. */
  retryAfter?: number;
  /** Overrides the default OpenAI `code` for this kind. */
  code?: string;
  /** Retrying cannot help (a lifetime spend cap): sent as `x-should-retry: false`, which both SDKs honour. */
  noRetry?: boolean;
}

export class GatewayError extends Error {
  readonly kind: ErrorKind;
  readonly param?: string;
  readonly retryAfter?: number;
  readonly code?: string;
  readonly noRetry?: boolean;
  constructor(kind: ErrorKind, message: string, opts: GatewayErrorOptions = {}) {
    super(message);
    this.name = 'GatewayError';
    this.kind = kind;
    this.param = opts.param;
    this.retryAfter = opts.retryAfter;
    this.code = opts.code;
    this.noRetry = opts.noRetry;
  }
  /** HTTP status on the chat surface; the messages surface maps `overloaded` to 529 itself. */
  get status(): number {
    return STATUS[this.kind];
  }
}

/** Anything thrown that is not a GatewayError is a bug: it must not leak its message. */
export function asGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError('upstream', 'Internal error while handling the request.');
}
