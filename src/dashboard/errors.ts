// The dashboard's error envelope (API.md §3): `{"error":{"code","message","param"?,"reason"?,
// "params"?}}`. Its own error type extends GatewayError so that the router neither logs it as a
// bug nor rewrites it. The message is for people reading logs and curl output; clients word
// the refusal themselves from code, reason and params (error-codes.ts).

import { GatewayError, type ErrorKind } from '../errors.js';
import type { Exchange } from '../server/exchange.js';
import { ERROR_CODES, type ErrorBody, type ErrorParams, type FieldReason } from './error-codes.js';

export interface ErrorDetail {
  param?: string;
  reason?: FieldReason;
  params?: ErrorParams;
}

const KIND_BY_STATUS: Record<number, ErrorKind> = {
  400: 'invalid_request',
  401: 'authentication',
  403: 'permission',
  404: 'not_found',
  409: 'invalid_request',
  413: 'too_large',
  429: 'rate_limit',
  503: 'unavailable',
};

export class DashboardError extends GatewayError {
  readonly httpStatus: number;
  readonly detail?: ErrorDetail;
  constructor(status: number, code: string, message: string, retryAfter?: number, detail?: ErrorDetail) {
    super(KIND_BY_STATUS[status] ?? 'invalid_request', message, { code, retryAfter });
    this.name = 'DashboardError';
    this.httpStatus = status;
    this.detail = detail;
  }
  override get status(): number {
    return this.httpStatus;
  }
}

export const badRequest = (code: string, message: string, detail?: ErrorDetail) =>
  new DashboardError(400, code, message, undefined, detail);
export const unauthorized = (code: string, message: string) => new DashboardError(401, code, message);
export const notFound = (message = 'Not found.') => new DashboardError(404, 'not_found', message);
export const conflict = (code: string, message: string) => new DashboardError(409, code, message);
export const tooManyAttempts = (retryAfterS: number, message: string) =>
  new DashboardError(429, 'too_many_attempts', message, Math.max(1, Math.ceil(retryAfterS)));

/** Statuses and codes for GatewayErrors raised by shared code (body reading, stores). */
const FROM_KIND: Record<ErrorKind, [number, string]> = {
  invalid_request: [400, 'invalid_request'],
  authentication: [401, 'unauthorized'],
  insufficient_balance: [402, 'insufficient_balance'],
  permission: [403, 'forbidden'],
  not_found: [404, 'not_found'],
  too_large: [413, 'request_too_large'],
  rate_limit: [429, 'too_many_attempts'],
  // No upstream behind the dashboard: this kind only carries unexpected failures.
  upstream: [500, 'internal_error'],
  overloaded: [503, 'unavailable'],
  timeout: [504, 'timeout'],
  unavailable: [503, 'unavailable'],
};

export function renderDashboardError(ex: Exchange, err: GatewayError): void {
  let status: number;
  let code: string;
  let detail: ErrorDetail | undefined;
  if (err instanceof DashboardError) {
    status = err.status;
    code = err.code ?? 'error';
    detail = err.detail;
  } else {
    [status, code] = FROM_KIND[err.kind];
    // Raised below the dashboard with one of its codes (a credit past the most a balance holds).
    if (err.code && (ERROR_CODES as readonly string[]).includes(err.code)) code = err.code;
  }
  const headers: Record<string, string> = { 'cache-control': 'no-store' };
  if (err.retryAfter !== undefined) headers['retry-after'] = String(err.retryAfter);
  const body = { code, message: err.message, ...detail } as ErrorBody;
  ex.json(status, { error: body }, headers);
}
