// The dashboard's OpenAPI document: the usage log (answered and refused requests), its CSV and
// totals, and the playground.

import { PlaygroundBody } from '../playground.js';
import { LIMITS } from '../schemas.js';
import { UsagePage, UsageStats } from '../shapes/usage.js';
import { EXPORT_MAX_ROWS } from '../usage-export.js';
import { body, errors, ok, pageParams, rangeParams } from './common.js';

const usageFilterParams = [
  { name: 'model', in: 'query', schema: { type: 'string', maxLength: LIMITS.model } },
  { name: 'key_id', in: 'query', schema: { type: 'string', format: 'uuid' } },
  {
    name: 'status',
    in: 'query',
    schema: { type: 'string', pattern: '^(ok|error|refused|[1-5][0-9]{2})$' },
    description:
      'ok: 2xx; error: anything else (refused, failed, cut short); refused: refused or failed before any answer, at $0 (error_code set); or one status code',
  },
];

export const usagePaths = {
  '/usage': {
    get: {
      summary: 'Usage log, newest first',
      parameters: [...rangeParams, ...pageParams, ...usageFilterParams],
      responses: {
        '200': ok('One page', UsagePage),
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
          headers: {
            'x-rows': { schema: { type: 'integer' } },
            'x-truncated': { schema: { type: 'string', enum: ['true', 'false'] } },
          },
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
        '200': ok('Totals', UsageStats),
        ...errors(400, 401),
      },
    },
  },
  '/playground': {
    post: {
      summary: "Send a prompt through the inference path on the caller's balance, as an event stream",
      description:
        "The gateway calls POST /v1/chat/completions with the caller's playground key (one per user, kept; never shown, not listed; 20 requests a minute) " +
        "with stream and include_usage; the answer is that surface's event stream, relayed. x-request-id names the usage record, which appears in GET /usage once written. " +
        "Refusals of the inference surface come in this API's envelope: 402 insufficient_balance, 404 not_found (model), 429 too_many_attempts, " +
        "502 model_failed (no route answered; nothing charged), 503 model_unavailable (no provider of the model has a working key: the operator's to fix; another model may serve).",
      requestBody: body(PlaygroundBody),
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
