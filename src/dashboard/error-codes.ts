// The dashboard API's error vocabulary. The handlers raise these, the OpenAPI document lists
// them, and the web app imports this file to keep one message per entry in each language (its
// type checker refuses a dictionary that misses one). Its one import, the field rules' reasons,
// imports nothing either: the browser bundle takes both.

import type { ErrorParams, FieldReason } from '../field-rules.js';

export { FIELD_REASONS, type ErrorParams, type FieldReason } from '../field-rules.js';

/** `error.code`: what went wrong, stable across releases. */
export const ERROR_CODES = [
  'invalid_json',
  'invalid_text',
  'invalid_request',
  'invalid_range',
  'invalid_cursor',
  'invalid_token',
  'token_used',
  'token_expired',
  'amount_out_of_range',
  'unauthorized',
  'invalid_session',
  'invalid_credentials',
  'wrong_password',
  'forbidden',
  'not_found',
  'method_disabled',
  'already_verified',
  'too_many_keys',
  'invalid_code',
  'code_used',
  'code_expired',
  'request_too_large',
  'too_many_attempts',
  'too_many_open_deposits',
  'no_free_amount',
  'insufficient_balance',
  'provider_error',
  'refused',
  'unavailable',
  'timeout',
  'internal_error',
  'model_unavailable',
  'model_failed',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  param?: string;
  reason?: FieldReason;
  params?: ErrorParams;
}
