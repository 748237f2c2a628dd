// The dashboard's OpenAPI document: the usage log (answered and refused requests), its CSV and
// totals, and the playground.

import { SURFACE_NAMES } from '../../dialects/index.js';
import { PLAYGROUND_LIMITS } from '../playground.js';
import { LIMITS } from '../schemas.js';
import { EXPORT_MAX_ROWS } from '../usage-export.js';
import { errors, instant, int, json, money, nullableInstant, ok, pageParams, rangeParams, ref } from './common.js';

const usageFilterParams = [
  { name: 'model', in: 'query', schema: { type: 'string', maxLength: LIMITS.model } },
  { name: 'key_id', in: 'query', schema: { type: 'string', format: 'uuid' } },
  {
    name: 'status', in: 'query', schema: { type: 'string', pattern: '^(ok|error|refused|[1-5][0-9]{2})$' },
    description: 'ok: 2xx; error: anything else (refused, failed, cut short); refused: refused or failed before any answer, at $0 (error_code set); or one status code',
  },
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

export const usagePaths = {
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
  '/playground': {
    post: {
      summary: 'Send a prompt through the inference path on the caller\'s balance, as an event stream',
      description:
        'The gateway calls POST /v1/chat/completions with the caller\'s playground key (one per user, kept; never shown, not listed; 20 requests a minute) ' +
        'with stream and include_usage; the answer is that surface\'s event stream, relayed. x-request-id names the usage record, which appears in GET /usage once written. ' +
        'Refusals of the inference surface come in this API\'s envelope: 402 insufficient_balance, 404 not_found (model), 429 too_many_attempts, ' +
        '502 model_failed (no route answered; nothing charged), 503 model_unavailable (no provider of the model has a working key: the operator\'s to fix; another model may serve).',
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
};

export const usageSchemas = {
  UsageRecord: {
    type: 'object',
    properties: {
      id: { type: 'string', pattern: '^\\d+$' },
      created_at: instant('When the request ended'),
      request_id: { type: 'string', description: 'The x-request-id the client was answered with (empty on an aggregate refusal row)' },
      model: { type: 'string', description: 'Empty on a refusal before the model was read (a 402 before the body) and on an aggregate refusal row' },
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
      error_code: {
        type: ['string', 'null'],
        description: 'Set on a request refused (or failed) before any answer, which costs $0 and no tokens: the error code it was answered with ' +
          '(insufficient_balance, model_not_found, key_rate_limit, key_spend_limit, invalid_json, invalid_request, request_too_large, …). null on answered requests.',
      },
      requests: {
        type: 'integer', minimum: 1,
        description: '1; on a refusal row with an empty request_id, the refusals of its key, minute and status counted past REFUSALS_LOGGED_PER_MINUTE instead of logged one by one',
      },
    },
    required: ['id', 'created_at', 'request_id', 'model', 'key_id', 'surface', 'stream', 'status', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cost_usd', 'official_cost_usd', 'latency_ms', 'ttft_ms', 'error_code', 'requests'],
  },
};
