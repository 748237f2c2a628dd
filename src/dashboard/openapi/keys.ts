// The dashboard's OpenAPI document: service keys and their limits.

import { SPEND_PERIODS } from '../../billing/key-limits.js';
import { MAX_LIVE_KEYS } from '../keys.js';
import { LIMITS } from '../schemas.js';
import { errors, instant, json, nullableInstant, ok, ref } from './common.js';

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


export const keyPaths = {
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
};

export const keySchemas = {
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
};
