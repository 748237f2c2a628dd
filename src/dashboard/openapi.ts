// OpenAPI 3.1 description of the dashboard API, served at GET /api/dashboard/openapi.json.
// Written next to the handlers, one part per concern (./openapi/); shapes validated with
// valibot (redemption codes, alerts) are described from those very schemas.
// test/dashboard/openapi.test.ts checks that every registered route is described and that
// answers carry the documented fields.

import { accountPaths } from './openapi/account.js';
import { ok } from './openapi/common.js';
import { errorResponses, errorSchemas } from './openapi/errors.js';
import { keyPaths, keySchemas } from './openapi/keys.js';
import { moneyPaths, moneySchemas } from './openapi/money.js';
import { usagePaths, usageSchemas } from './openapi/usage.js';

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
        get: { summary: 'This document', security: [], responses: { '200': ok('OpenAPI 3.1', { type: 'object' }) } },
      },
    },
    components: {
      securitySchemes: { session: { type: 'http', scheme: 'bearer', description: 'Session token from /login or /verify' } },
      schemas: { ...errorSchemas, ...keySchemas, ...usageSchemas, ...moneySchemas },
      responses: errorResponses,
    },
  };
}
