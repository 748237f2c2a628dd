// OpenAPI 3.1 description of the dashboard API, served at GET /api/dashboard/openapi.json.
// Written by hand next to the handlers; test/dashboard/openapi.test.ts checks that every
// registered route is described and that answers carry the documented fields.

import { RANGES, LIMITS } from './schemas.js';
import { ERROR_CODES, FIELD_REASONS } from './error-codes.js';
import { MAX_LIVE_KEYS } from './keys.js';
import { EXPORT_MAX_ROWS } from './usage-export.js';
import { PLAYGROUND_LIMITS } from './playground.js';
import { SPEND_PERIODS } from '../billing/key-limits.js';
import { MODEL_KINDS } from '../catalogue/schema.js';
import { SURFACE_NAMES } from '../dialects/index.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const money = (description: string) => ({ type: 'string', pattern: '^-?\\d+\\.\\d{9}$', description: `${description} (USD, decimal string, 9 decimals)`, examples: ['12.345678901'] });
const instant = (description: string) => ({ type: 'string', format: 'date-time', description });
const nullableInstant = (description: string) => ({ type: ['string', 'null'], format: 'date-time', description });
const int = (description: string) => ({ type: 'integer', minimum: 0, description });
const json = (schema: object) => ({ 'application/json': { schema } });
const ok = (description: string, schema: object) => ({ description, content: json(schema) });

const errors = (...statuses: number[]) => ({
  ...Object.fromEntries(statuses.map((s) => [String(s), { $ref: `#/components/responses/E${s}` }])),
  default: { $ref: '#/components/responses/Unexpected' },
});

const rangeParams = [
  { name: 'range', in: 'query', schema: { type: 'string', enum: Object.keys(RANGES) }, description: 'A window ending now. Not combinable with from/to.' },
  { name: 'from', in: 'query', schema: { type: 'string', maxLength: LIMITS.date }, description: 'ISO-8601 date or instant, inclusive. A date or a time without offset is UTC.', examples: ['2025-01-01', '2025-01-01T12:00:00+07:00'] },
  { name: 'to', in: 'query', schema: { type: 'string', maxLength: LIMITS.date }, description: 'ISO-8601 date or instant, exclusive. Must not be before from.' },
];
const pageParams = [
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: LIMITS.pageMax, default: LIMITS.pageDefault } },
  { name: 'cursor', in: 'query', schema: { type: 'string', maxLength: LIMITS.cursor }, description: 'next_cursor of the previous page, unchanged.' },
];

const usageFilterParams = [
  { name: 'model', in: 'query', schema: { type: 'string', maxLength: LIMITS.model } },
  { name: 'key_id', in: 'query', schema: { type: 'string', format: 'uuid' } },
  { name: 'status', in: 'query', schema: { type: 'string', pattern: '^(ok|error|[1-5][0-9]{2})$' }, description: 'ok: 2xx; error: anything else (refused, failed, cut short); or one status code' },
];

const tokenTotals = {
  requests: int('Requests'),
  prompt_tokens: int('Prompt tokens, cached ones included'),
  completion_tokens: int('Completion (output) tokens'),
  cached_tokens: int('Prompt tokens read from cache'),
  total_tokens: int('prompt_tokens + completion_tokens'),
  cost_usd: money('Charged'),
  official_cost_usd: money('What the vendor list prices would have charged'),
  saved_usd: money('official_cost_usd − cost_usd'),
};
const totalsRequired = Object.keys(tokenTotals);

const pricing = {
  type: 'object',
  description: 'USD per million tokens',
  properties: { input: { type: 'number' }, output: { type: 'number' }, cache_read: { type: 'number' }, cache_write: { type: 'number' } },
  required: ['input', 'output', 'cache_read', 'cache_write'],
};

const session = {
  type: 'object',
  properties: {
    user_id: { type: 'string', format: 'uuid' },
    token: { type: 'string', description: 'Session token, sent as "Authorization: Bearer <token>".' },
    expires_at: instant('When the session ends'),
  },
  required: ['user_id', 'token', 'expires_at'],
};

const deposit = {
  id: { type: 'string', format: 'uuid' },
  method: { type: 'string' },
  status: { type: 'string', enum: ['pending', 'paid', 'expired', 'failed'] },
  amount: { type: 'string', description: 'Amount to pay in the deposit currency, decimal string' },
  currency: { type: 'string' },
  credit_usd: money('Credited (or to be credited) to the balance'),
  created_at: instant('Creation time'),
  paid_at: nullableInstant('When it was paid'),
};
const depositDetail = {
  ...deposit,
  expires_at: nullableInstant('When an unpaid invoice expires'),
  qr_string: { type: ['string', 'null'], description: 'While pending, for QRIS' },
  qr_png: { type: ['string', 'null'], description: 'While pending, for QRIS: PNG data URL' },
  payment_url: { type: ['string', 'null'], description: 'While pending, for epusdt' },
};

const keyLimits = {
  rpm_limit: { type: ['integer', 'null'], minimum: 1, description: 'Requests per minute allowed to this key; null: no limit' },
  spend_limit_usd: { type: ['string', 'null'], pattern: '^\\d+\\.\\d{9}$', description: 'Spend allowed to this key per spend_limit_period (USD, decimal string, 9 decimals); null: no cap' },
  spend_limit_period: { type: ['string', 'null'], enum: [...SPEND_PERIODS, null], description: 'UTC day, ISO week, calendar month, or total (lifetime); null with no cap' },
};
/** The same limits as accepted in a request body. */
const keyLimitsInput = {
  rpm_limit: { type: ['integer', 'null'], minimum: 1, maximum: 2_147_483_647, description: 'Requests per minute; null removes the limit' },
  spend_limit_usd: {
    oneOf: [{ type: 'string', pattern: '^\\d+(\\.\\d{1,9})?$' }, { type: 'number', exclusiveMinimum: 0 }, { type: 'null' }],
    description: 'Spend cap in USD (more than 0, at most 9 decimals); null removes the cap. Needs spend_limit_period.',
  },
  spend_limit_period: { type: 'string', enum: [...SPEND_PERIODS], description: 'Required with a spend_limit_usd amount, and only with one' },
};

export function openApiDocument(publicUrl: string) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'airouter dashboard API',
      version: '1',
      description:
        'Accounts, sessions, service keys, usage, balance and deposits. JSON in and out. Money is a decimal string of USD with nine decimals; ' +
        'prices are JSON numbers in USD per million tokens. Errors: {"error":{"code","message","param"?,"reason"?,"params"?}}.',
    },
    servers: [{ url: `${publicUrl}/api/dashboard` }],
    security: [{ session: [] }],
    paths: {
      '/register': {
        post: {
          summary: 'Start signup: mails a verification link',
          description: 'Answers the same whether or not the email has an account. The link is {PUBLIC_URL}/verify?token=…, valid 24 hours, single use.',
          security: [],
          requestBody: { required: true, content: json({ type: 'object', properties: { email: { type: 'string', format: 'email', maxLength: LIMITS.email } }, required: ['email'] }) },
          responses: { '202': ok('Accepted', { type: 'object', properties: { status: { const: 'verification_sent' } }, required: ['status'] }), ...errors(400, 413, 429) },
        },
      },
      '/verify': {
        post: {
          summary: 'Complete signup: set the password and open a session',
          security: [],
          requestBody: {
            required: true,
            content: json({
              type: 'object',
              properties: {
                token: { type: 'string', maxLength: LIMITS.token, description: 'The token from the mailed link' },
                password: { type: 'string', minLength: LIMITS.passwordMin, maxLength: LIMITS.passwordMax },
              },
              required: ['token', 'password'],
            }),
          },
          responses: { '200': ok('Signed up and signed in', session), ...errors(400, 409, 413) },
        },
      },
      '/login': {
        post: {
          summary: 'Open a session',
          description: 'Attempts are limited per email and per client address (LOGIN_MAX_ATTEMPTS per LOGIN_WINDOW_S); past the limit, 429 with retry-after.',
          security: [],
          requestBody: {
            required: true,
            content: json({
              type: 'object',
              properties: { email: { type: 'string', format: 'email', maxLength: LIMITS.email }, password: { type: 'string', minLength: 1, maxLength: LIMITS.passwordMax } },
              required: ['email', 'password'],
            }),
          },
          responses: { '200': ok('Signed in', session), ...errors(400, 401, 413, 429) },
        },
      },
      '/logout': {
        post: { summary: 'End this session', responses: { '204': { description: 'Signed out' }, ...errors(401) } },
      },
      '/logout-all': {
        post: { summary: 'End every session of the account, this one included', responses: { '204': { description: 'Signed out everywhere' }, ...errors(401) } },
      },
      '/password': {
        post: {
          summary: 'Change the password',
          description: 'Needs the current password (wrong_password, param current_password, otherwise; attempts limited like logins). Ends every other session of the account and every outstanding emailed link.',
          requestBody: {
            required: true,
            content: json({
              type: 'object',
              properties: { current_password: { type: 'string', minLength: 1, maxLength: LIMITS.passwordMax }, new_password: { type: 'string', minLength: LIMITS.passwordMin, maxLength: LIMITS.passwordMax } },
              required: ['current_password', 'new_password'],
            }),
          },
          responses: { '204': { description: 'Changed' }, ...errors(400, 401, 413, 429) },
        },
      },
      '/password-reset': {
        post: {
          summary: 'Mail a password reset link',
          description: 'Answers the same whether or not the email has an account; only an account that is set up gets the mail. The link is {PUBLIC_URL}/reset?token=…, valid one hour, single use.',
          security: [],
          requestBody: { required: true, content: json({ type: 'object', properties: { email: { type: 'string', format: 'email', maxLength: LIMITS.email } }, required: ['email'] }) },
          responses: { '202': ok('Accepted', { type: 'object', properties: { status: { const: 'reset_sent' } }, required: ['status'] }), ...errors(400, 413, 429) },
        },
      },
      '/password-reset/confirm': {
        post: {
          summary: 'Set a new password from a reset link; ends every session and opens a new one',
          security: [],
          requestBody: {
            required: true,
            content: json({
              type: 'object',
              properties: {
                token: { type: 'string', maxLength: LIMITS.token, description: 'The token from the mailed link' },
                password: { type: 'string', minLength: LIMITS.passwordMin, maxLength: LIMITS.passwordMax },
              },
              required: ['token', 'password'],
            }),
          },
          responses: { '200': ok('Password set, signed in', session), ...errors(400, 413) },
        },
      },
      '/keys': {
        get: {
          summary: 'List service keys (never their secrets)',
          responses: { '200': ok('Keys, newest first', { type: 'object', properties: { data: { type: 'array', items: ref('Key') } }, required: ['data'] }), ...errors(401) },
        },
        post: {
          summary: 'Create a service key',
          description: `The full key is in this answer only. At most ${MAX_LIVE_KEYS} live keys per account (409 beyond). ` +
            'Limits are optional: past them the key gets 429 with retry-after on the inference surfaces.',
          requestBody: { required: false, content: json({ type: 'object', properties: { name: { type: ['string', 'null'], maxLength: LIMITS.name }, ...keyLimitsInput } }) },
          responses: {
            '201': ok('Created', {
              type: 'object',
              properties: {
                id: { type: 'string', format: 'uuid' },
                name: { type: 'string' },
                key: { type: 'string', pattern: '^ar-[0-9A-Za-z]{40}$' },
                prefix: { type: 'string' },
                created_at: instant('Creation time'),
                ...keyLimits,
              },
              required: ['id', 'name', 'key', 'prefix', 'created_at', ...Object.keys(keyLimits)],
            }),
            ...errors(400, 401, 409, 413),
          },
        },
      },
      '/keys/{id}': {
        patch: {
          summary: 'Change a key\'s name or limits (in every gateway process from this answer on)',
          description: 'Fields left out stay as they are; null removes a limit. A new spend cap counts what the key already spent in the current period.',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          requestBody: { required: true, content: json({ type: 'object', properties: { name: { type: 'string', maxLength: LIMITS.name }, ...keyLimitsInput } }) },
          responses: { '200': ok('The key as it is now', ref('Key')), ...errors(400, 401, 404, 413) },
        },
        delete: {
          summary: 'Revoke a service key (at once, in every gateway process)',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          responses: {
            '200': ok('Revoked (or already revoked: the original time)', {
              type: 'object',
              properties: { id: { type: 'string', format: 'uuid' }, revoked_at: instant('Revocation time') },
              required: ['id', 'revoked_at'],
            }),
            ...errors(401, 404),
          },
        },
      },
      '/usage': {
        get: {
          summary: 'Usage log, newest first',
          parameters: [
            ...rangeParams,
            ...pageParams,
            ...usageFilterParams,
          ],
          responses: {
            '200': ok('One page', {
              type: 'object',
              properties: { data: { type: 'array', items: ref('UsageRecord') }, next_cursor: { type: ['string', 'null'], description: 'null on the last page' } },
              required: ['data', 'next_cursor'],
            }),
            ...errors(400, 401),
          },
        },
      },
      '/usage.csv': {
        get: {
          summary: 'The usage log as CSV, with the same filters, newest first',
          description: `Every matching record up to ${EXPORT_MAX_ROWS} (x-truncated: true past that), with the key's name. Cells starting like a spreadsheet formula (=, +, -, @) are quoted with a leading apostrophe.`,
          parameters: [...rangeParams, ...usageFilterParams],
          responses: {
            '200': {
              description: 'CSV (RFC 4180, CRLF), one header line',
              headers: { 'x-rows': { schema: { type: 'integer' } }, 'x-truncated': { schema: { type: 'string', enum: ['true', 'false'] } } },
              content: { 'text/csv': { schema: { type: 'string' } } },
            },
            ...errors(400, 401),
          },
        },
      },
      '/usage-stats': {
        get: {
          summary: 'Usage totals over a range, by model and by UTC day',
          parameters: rangeParams,
          responses: {
            '200': ok('Totals', {
              type: 'object',
              properties: {
                from: nullableInstant('Start of the range applied (null: from the beginning)'),
                to: nullableInstant('End of the range applied (null: until now)'),
                ...tokenTotals,
                by_model: {
                  type: 'array',
                  description: 'Dearest first',
                  items: { type: 'object', properties: { model: { type: 'string' }, ...tokenTotals }, required: ['model', ...totalsRequired] },
                },
                by_day: {
                  type: 'array',
                  description: 'Days with usage, oldest first',
                  items: { type: 'object', properties: { day: { type: 'string', format: 'date' }, ...tokenTotals }, required: ['day', ...totalsRequired] },
                },
              },
              required: ['from', 'to', ...totalsRequired, 'by_model', 'by_day'],
            }),
            ...errors(400, 401),
          },
        },
      },
      '/catalog': {
        get: {
          summary: 'Models, prices and discounts',
          responses: {
            '200': ok('The catalogue', {
              type: 'object',
              properties: {
                data: {
                  type: 'array',
                  items: {
                    type: 'object',
                    properties: {
                      id: { type: 'string' },
                      display_name: { type: 'string' },
                      owned_by: { type: 'string' },
                      context_window: { type: 'integer' },
                      max_output_tokens: { type: 'integer', description: '0 for an embedding model' },
                      kind: { type: 'string', enum: [...MODEL_KINDS], description: 'chat: the chat surfaces; embedding: POST /v1/embeddings (input prices only)' },
                      dimensions: { type: ['integer', 'null'], minimum: 1, description: 'Embedding models: the length of their vectors, when the catalogue says' },
                      pricing,
                      official_pricing: pricing,
                      discount_pct: { type: 'integer', description: 'round((1 − pricing.input / official_pricing.input) × 100); 0 without an official input price' },
                    },
                    required: ['id', 'display_name', 'owned_by', 'context_window', 'max_output_tokens', 'kind', 'dimensions', 'pricing', 'official_pricing', 'discount_pct'],
                  },
                },
              },
              required: ['data'],
            }),
            ...errors(401),
          },
        },
      },
      '/balance': {
        get: {
          summary: 'Balance, amounts held by requests in flight, and what is available',
          responses: {
            '200': ok('Balance', {
              type: 'object',
              properties: {
                currency: { const: 'USD' },
                balance_usd: money('Balance'),
                reserved_usd: money('Held for requests in flight, and by the leases of other gateway processes (handed back within LEASE_WINDOW_MS of their last request)'),
                available_usd: money('balance − reserved'),
              },
              required: ['currency', 'balance_usd', 'reserved_usd', 'available_usd'],
            }),
            ...errors(401),
          },
        },
      },
      '/deposits': {
        get: {
          summary: 'Deposits, newest first',
          parameters: [...rangeParams, ...pageParams],
          responses: {
            '200': ok('One page', {
              type: 'object',
              properties: { data: { type: 'array', items: ref('Deposit') }, next_cursor: { type: ['string', 'null'] } },
              required: ['data', 'next_cursor'],
            }),
            ...errors(400, 401),
          },
        },
      },
      '/deposits/{id}': {
        get: {
          summary: 'One of your deposits: poll its status, or show a pending one\'s QR or checkout link again',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          responses: { '200': ok('The deposit', ref('DepositDetail')), ...errors(401, 404) },
        },
      },
      '/deposit/info': {
        get: {
          summary: 'The deposit methods this gateway offers, with their public parameters',
          description: 'Only methods whose configuration is complete are listed.',
          responses: {
            '200': ok('Methods', { type: 'object', properties: { methods: { type: 'array', items: ref('DepositMethod') } }, required: ['methods'] }),
            ...errors(401),
          },
        },
      },
      '/topup/qris': {
        post: {
          summary: 'Open a QRIS invoice in rupiah',
          description:
            'Rate, fee and expiry are fixed now. With an own-merchant QRIS code the amount to pay is amount_idr plus a small suffix (1-999) that tells open invoices apart; ' +
            'amount_idr in the answer is what to pay, and the credit is computed from it. Past DEPOSIT_MAX_OPEN open invoices, 429.',
          requestBody: { required: true, content: json({ type: 'object', properties: { amount_idr: { type: ['integer', 'string'], description: 'Whole rupiah' } }, required: ['amount_idr'] }) },
          responses: {
            '201': ok('Invoice opened', {
              type: 'object',
              properties: {
                id: { type: 'string', format: 'uuid' },
                status: { const: 'pending' },
                amount_idr: { type: 'integer', description: 'Rupiah to pay' },
                credit_usd: money('Credited when paid'),
                qr_string: { type: 'string', description: 'The QRIS payload (EMVCo text)' },
                qr_png: { type: 'string', pattern: '^data:image/png;base64,', description: 'The same as a PNG data URL' },
                expires_at: instant('Pay before this'),
              },
              required: ['id', 'status', 'amount_idr', 'credit_usd', 'qr_string', 'qr_png', 'expires_at'],
            }),
            ...errors(400, 401, 404, 413, 429, 502),
          },
        },
      },
      '/deposit/epusdt/create': {
        post: {
          summary: 'Open a hosted USDT/USDC checkout',
          description: 'Pay on payment_url. Past DEPOSIT_MAX_OPEN open invoices, 429.',
          requestBody: {
            required: true,
            content: json({
              type: 'object',
              properties: {
                amount_usd: { type: ['number', 'string'], description: 'USD of credit, at most 2 decimals' },
                token: { type: 'string', description: 'One of deposit/info\'s tokens (e.g. usdt.trc20); default the first' },
              },
              required: ['amount_usd'],
            }),
          },
          responses: {
            '201': ok('Checkout opened', {
              type: 'object',
              properties: {
                id: { type: 'string', format: 'uuid' },
                status: { const: 'pending' },
                amount_usd: money('Credited when paid'),
                payment_url: { type: 'string', description: 'The hosted checkout page' },
                expires_at: instant('Pay before this'),
              },
              required: ['id', 'status', 'amount_usd', 'payment_url', 'expires_at'],
            }),
            ...errors(400, 401, 404, 413, 429, 502),
          },
        },
      },
      '/playground': {
        post: {
          summary: 'Send a prompt through the inference path on the caller\'s balance, as an event stream',
          description:
            'The gateway mints an ephemeral key of the caller (never shown, not listed, revoked when the answer ends) and calls POST /v1/chat/completions ' +
            'with stream and include_usage; the answer is that surface\'s event stream, relayed. x-request-id names the usage record, which appears in GET /usage once written. ' +
            'Refusals of the inference surface come in this API\'s envelope: 402 insufficient_balance, 404 not_found (model), 429 too_many_attempts.',
          requestBody: {
            required: true,
            content: json({
              type: 'object',
              properties: {
                model: { type: 'string', maxLength: LIMITS.model, description: 'A catalogue model id' },
                prompt: { type: 'string', minLength: 1, maxLength: PLAYGROUND_LIMITS.prompt },
                max_tokens: { type: 'integer', minimum: 1, maximum: PLAYGROUND_LIMITS.maxTokens, default: PLAYGROUND_LIMITS.defaultMaxTokens },
              },
              required: ['model', 'prompt'],
            }),
          },
          responses: {
            '200': {
              description: 'The chat-completions event stream (data: {…} lines, then data: [DONE])',
              headers: { 'x-request-id': { schema: { type: 'string' } } },
              content: { 'text/event-stream': { schema: { type: 'string' } } },
            },
            ...errors(400, 401, 402, 404, 413, 429),
          },
        },
      },
      '/openapi.json': {
        get: { summary: 'This document', security: [], responses: { '200': ok('OpenAPI 3.1', { type: 'object' }) } },
      },
    },
    components: {
      securitySchemes: { session: { type: 'http', scheme: 'bearer', description: 'Session token from /login or /verify' } },
      schemas: {
        Error: {
          type: 'object',
          properties: {
            error: {
              type: 'object',
              properties: {
                code: { type: 'string', enum: [...ERROR_CODES] },
                message: { type: 'string', description: 'In English, for people; clients word the refusal from code, reason and params' },
                param: { type: 'string', description: 'The body field or query parameter at fault (dotted path)' },
                reason: { type: 'string', enum: [...FIELD_REASONS], description: 'The rule the field broke' },
                params: {
                  type: 'object',
                  description: "The rule's figures: min, max (numbers, or decimal strings for amounts), allowed (the values allowed), decimals",
                  additionalProperties: { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'array', items: { type: 'string' } }] },
                },
              },
              required: ['code', 'message'],
            },
          },
          required: ['error'],
        },
        Key: {
          type: 'object',
          properties: {
            id: { type: 'string', format: 'uuid' },
            name: { type: 'string' },
            prefix: { type: 'string', description: 'The first characters of the key, to recognise it' },
            created_at: instant('Creation time'),
            last_used_at: nullableInstant('Last request (updated as usage is recorded)'),
            revoked_at: nullableInstant('Revocation time'),
            ...keyLimits,
          },
          required: ['id', 'name', 'prefix', 'created_at', 'last_used_at', 'revoked_at', ...Object.keys(keyLimits)],
        },
        UsageRecord: {
          type: 'object',
          properties: {
            id: { type: 'string', pattern: '^\\d+$' },
            created_at: instant('When the request ended'),
            request_id: { type: 'string', description: 'The x-request-id the client was answered with' },
            model: { type: 'string' },
            key_id: { type: ['string', 'null'], format: 'uuid' },
            surface: { type: 'string', enum: SURFACE_NAMES },
            stream: { type: 'boolean' },
            status: { type: 'integer', description: 'HTTP status given to the client (499: the client went away)' },
            prompt_tokens: int('Prompt tokens, cached ones included'),
            completion_tokens: int('Completion tokens'),
            cached_tokens: int('Prompt tokens read from cache'),
            cost_usd: money('Charged'),
            official_cost_usd: money('At the vendor list prices'),
            latency_ms: int('Total time'),
            ttft_ms: { type: ['integer', 'null'], minimum: 0, description: 'Time to the first token (streams)' },
          },
          required: ['id', 'created_at', 'request_id', 'model', 'key_id', 'surface', 'stream', 'status', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cost_usd', 'official_cost_usd', 'latency_ms', 'ttft_ms'],
        },
        Deposit: { type: 'object', properties: deposit, required: Object.keys(deposit) },
        DepositDetail: { type: 'object', properties: depositDetail, required: Object.keys(depositDetail) },
        DepositMethod: {
          type: 'object',
          properties: {
            id: { type: 'string', enum: ['qris', 'epusdt'], description: 'qris: POST /topup/qris; epusdt: POST /deposit/epusdt/create' },
            currency: { type: 'string', description: 'Currency of the amount asked for (IDR for qris, USD for epusdt)' },
            min: { type: 'string', description: 'Smallest amount, decimal string in currency' },
            max: { type: 'string', description: 'Largest amount, decimal string in currency' },
            rate: { type: 'string', description: 'qris: rupiah per USD of credit; epusdt: pay_currency units per USD' },
            fee_pct: { type: 'string', description: 'Percent taken off the credit' },
            expiry_s: int('Seconds an invoice stays payable'),
            pay_currency: { type: 'string', description: 'epusdt: what the checkout asks for (USD when the server converts itself)' },
            tokens: { type: 'array', items: { type: 'string' }, description: 'epusdt: the coins/networks one may pick (token); empty: no choice' },
          },
          required: ['id', 'currency', 'min', 'max', 'rate', 'fee_pct', 'expiry_s'],
        },
      },
      responses: {
        Unexpected: {
          description: 'A store is unreachable (503, unavailable; worth a retry) or an unexpected failure (500, internal_error)',
          content: json(ref('Error')),
        },
        ...Object.fromEntries(
          [
            [400, 'Invalid input (codes: invalid_json, invalid_text, invalid_request, invalid_range, invalid_cursor, invalid_token, token_used, token_expired, amount_out_of_range, wrong_password); param, reason and params name the field and its rule'],
            [402, 'The balance cannot cover the request (insufficient_balance)'],
            [401, 'No session, an invalid or expired one (unauthorized, invalid_session), or wrong credentials (invalid_credentials)'],
            [404, 'Not found, or not yours (not_found); a deposit method that is not enabled (method_disabled)'],
            [409, 'Conflict (already_verified, too_many_keys)'],
            [413, 'Body too large (request_too_large)'],
            [429, 'Too many attempts (too_many_attempts), too many open deposits (too_many_open_deposits), no free QRIS amount (no_free_amount); see retry-after'],
            [502, 'The payment provider did not open the invoice (provider_error); nothing was charged'],
          ].map(([status, description]) => [
            `E${status}`,
            {
              description,
              ...(status === 429 ? { headers: { 'retry-after': { schema: { type: 'integer' }, description: 'Seconds to wait' } } } : {}),
              content: json(ref('Error')),
            },
          ]),
        ),
      },
    },
  };
}
