// The dashboard's OpenAPI document: the error envelope and the error answers every path refers to.

import { ERROR_CODES, FIELD_REASONS } from '../error-codes.js';
import { json, ref } from './common.js';

export const errorSchemas = {
  Error: {
    type: 'object',
    properties: {
      error: {
        type: 'object',
        properties: {
          code: { type: 'string', enum: [...ERROR_CODES] },
          message: {
            type: 'string',
            description: 'In English, for people; clients word the refusal from code, reason and params',
          },
          param: { type: 'string', description: 'The body field or query parameter at fault (dotted path)' },
          reason: { type: 'string', enum: [...FIELD_REASONS], description: 'The rule the field broke' },
          params: {
            type: 'object',
            description:
              "The rule's figures: min, max (numbers, or decimal strings for amounts), allowed (the values allowed), decimals",
            additionalProperties: {
              oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'array', items: { type: 'string' } }],
            },
          },
        },
        required: ['code', 'message'],
      },
    },
    required: ['error'],
  },
};

export const errorResponses = {
  Unexpected: {
    description:
      'A store is unreachable (503, unavailable; worth a retry) or an unexpected failure (500, internal_error)',
    content: json(ref('Error')),
  },
  ...Object.fromEntries(
    [
      [
        400,
        'Invalid input (codes: invalid_json, invalid_text, invalid_request, invalid_range, invalid_cursor, invalid_token, token_used, token_expired, amount_out_of_range, wrong_password, invalid_code, code_expired); param, reason and params name the field and its rule',
      ],
      [402, 'The balance cannot cover the request (insufficient_balance)'],
      [
        401,
        'No session, an invalid or expired one (unauthorized, invalid_session), or wrong credentials (invalid_credentials)',
      ],
      [404, 'Not found, or not yours (not_found); a deposit method that is not enabled (method_disabled)'],
      [409, 'Conflict (already_verified, too_many_keys, code_used)'],
      [413, 'Body too large (request_too_large)'],
      [
        429,
        'Too many attempts (too_many_attempts), too many open deposits (too_many_open_deposits), no free QRIS amount (no_free_amount); see retry-after',
      ],
      [502, 'The payment provider did not open the invoice (provider_error); nothing was charged'],
    ].map(([status, description]) => [
      `E${status}`,
      {
        description,
        ...(status === 429
          ? { headers: { 'retry-after': { schema: { type: 'integer' }, description: 'Seconds to wait' } } }
          : {}),
        content: json(ref('Error')),
      },
    ]),
  ),
};
