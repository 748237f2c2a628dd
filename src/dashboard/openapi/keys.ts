// The dashboard's OpenAPI document: service keys and their limits.

import { MAX_LIVE_KEYS } from '../keys.js';
import { CreateKeyBody, UpdateKeyBody } from '../schemas.js';
import { Key, KeyList, NewKey, RevokedKey } from '../shapes/keys.js';
import { body, errors, ok } from './common.js';

const keyId = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };

export const keyPaths = {
  '/keys': {
    get: {
      summary: 'List service keys (never their secrets)',
      responses: { '200': ok('Keys, newest first', KeyList), ...errors(401) },
    },
    post: {
      summary: 'Create a service key',
      description:
        `The full key is in this answer only. At most ${MAX_LIVE_KEYS} live keys per account (409 beyond). ` +
        'Limits are optional: past them the key gets 429 with retry-after on the inference surfaces.',
      requestBody: body(CreateKeyBody, false),
      responses: { '201': ok('Created', NewKey), ...errors(400, 401, 409, 413) },
    },
  },
  '/keys/{id}': {
    patch: {
      summary: "Change a key's name or limits (in every gateway process from this answer on)",
      description:
        'Fields left out stay as they are; null removes a limit. A new spend cap counts what the key already spent in the current period.',
      parameters: [keyId],
      requestBody: body(UpdateKeyBody),
      responses: { '200': ok('The key as it is now', Key), ...errors(400, 401, 404, 413) },
    },
    delete: {
      summary: 'Revoke a service key (at once, in every gateway process)',
      parameters: [keyId],
      responses: { '200': ok('Revoked (or already revoked: the original time)', RevokedKey), ...errors(401, 404) },
    },
  },
};
