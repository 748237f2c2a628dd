// OpenAPI 3.1 description of the dashboard API, served at GET /api/dashboard/openapi.json.
// One part per concern (./openapi/): paths, summaries, parameters and errors written there, the
// request and answer schemas derived from the valibot schemas that validate requests
// (./schemas.ts) and type the answers (./shapes/). test/dashboard/openapi.test.ts checks that
// every registered route is described and that answers fit their shapes.

import { accountPaths } from './openapi/account.js';
import { namedSchemas } from './openapi/common.js';
import { errorResponses, errorSchemas } from './openapi/errors.js';
import { keyPaths } from './openapi/keys.js';
import { moneyPaths } from './openapi/money.js';
import { usagePaths } from './openapi/usage.js';

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
      ...accountPaths,
      ...keyPaths,
      ...usagePaths,
      ...moneyPaths,
      '/openapi.json': {
        get: {
          summary: 'This document',
          security: [],
          responses: {
            '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } },
          },
        },
      },
    },
    components: {
      securitySchemes: {
        session: { type: 'http', scheme: 'bearer', description: 'Session token from /login or /verify' },
      },
      schemas: { ...errorSchemas, ...namedSchemas() },
      responses: errorResponses,
    },
  };
}
