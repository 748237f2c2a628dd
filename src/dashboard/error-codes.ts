// The dashboard API's error vocabulary. The handlers raise these, the OpenAPI document lists
// them, and the web app imports this file to keep one message per entry in each language (its
// type checker refuses a dictionary that misses one). No imports: the browser bundle takes it.

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

/**
 * `error.reason`, with invalid_request, invalid_range and invalid_cursor: which rule the field
 * named by `error.param` broke. `error.params` carries the rule's figures (`min`, `max`,
 * `allowed`), so a client can say it in its own words.
 */
export const FIELD_REASONS = [
  'required',
  'invalid_type',
  'too_short',
  'too_long',
  'invalid_email',
  'invalid_format',
  'too_small',
  'too_large',
  'not_integer',
  'not_allowed',
  'control_characters',
  'invalid_amount',
  'period_required',
  'period_without_cap',
  'invalid_date',
  'mixed_range',
  'disordered_range',
  'repeated',
  'invalid_cursor',
] as const;
export type FieldReason = (typeof FIELD_REASONS)[number];

export type ErrorParams = Record<string, string | number | string[]>;

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  param?: string;
  reason?: FieldReason;
  params?: ErrorParams;
}
