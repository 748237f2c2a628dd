// OpenAPI 3.1 description of /api/admin, served at GET /api/admin/openapi.json (admins only).
// Request and answer schemas are derived from the valibot schemas that validate them
// (./shapes.ts), so the document cannot drift from what the handlers accept and send.

import type * as v from 'valibot';
import { toJsonSchema } from '../server/json-schema.js';
import * as S from './shapes.js';

const json = (schema: v.GenericSchema) => ({ 'application/json': { schema: toJsonSchema(schema) } });
const ok = (description: string, schema: v.GenericSchema) => ({ description, content: json(schema) });
const errorRef = { $ref: '#/components/schemas/Error' };
const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [String(s), { description: ERRORS[s], content: { 'application/json': { schema: errorRef } } }]),
  );
const ERRORS: Record<number, string> = {
  400: "Invalid input (invalid_request, invalid_json, invalid_text; invalid_catalogue with the catalogue's own message)",
  401: 'No session, or an invalid or expired one',
  403: "The session is not an admin's (forbidden)",
  404: 'No such user or endpoint (not_found)',
  409: 'A debit past the balance (insufficient_balance); a deposit already paid, failed, or not open (already_paid, not_confirmed, not_open); a provider or model id taken (provider_exists, model_exists); no PROVIDER_KEY_SECRET to seal a key with (provider_key_secret_missing)',
};
const depositId = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const userId = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const providerId = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const keyId = { name: 'key', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const queryParams = (schema: v.GenericSchema) =>
  Object.entries((toJsonSchema(schema).properties ?? {}) as Record<string, unknown>).map(([name, s]) => ({
    name,
    in: 'query',
    schema: s,
  }));
const action = (summary: string, body: v.GenericSchema, answer: v.GenericSchema, extra: number[] = []) => ({
  post: {
    summary,
    parameters: [userId],
    requestBody: { required: true, content: json(body) },
    responses: { '200': ok('Done', answer), ...errors(400, 401, 403, 404, ...extra) },
  },
});

export function adminOpenApi(publicUrl: string) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'airouter admin API',
      version: '1',
      description:
        "The operator's side: accounts, money, the audit log. Admin sessions only (a dashboard session of an account with the admin role); every change is in the audit log.",
    },
    servers: [{ url: `${publicUrl}/api/admin` }],
    security: [{ session: [] }],
    paths: {
      '/me': {
        get: {
          summary: 'The admin behind the session (403 for any other session)',
          responses: {
            '200': {
              description: 'An admin',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: { id: { type: 'string' }, email: { type: 'string' }, is_admin: { const: true } },
                    required: ['id', 'email', 'is_admin'],
                  },
                },
              },
            },
            ...errors(401, 403),
          },
        },
      },
      '/users': {
        get: {
          summary: 'Find accounts by a part of their address, in address order',
          parameters: queryParams(S.UsersQuery),
          responses: { '200': ok('A page', S.AdminUserList), ...errors(400, 401, 403) },
        },
      },
      '/users/{id}': {
        get: {
          summary: 'An account: balance (available, reserved), keys, 30 days of usage, adjustments',
          parameters: [userId],
          responses: { '200': ok('The account', S.AdminUserDetail), ...errors(401, 403, 404) },
        },
      },
      '/users/{id}/credit': action(
        'Credit a balance, with a reason (a balance adjustment)',
        S.AdjustBody,
        S.AdjustAnswer,
      ),
      '/users/{id}/debit': action(
        'Debit a balance, with a reason; refused past the balance',
        S.AdjustBody,
        S.AdjustAnswer,
        [409],
      ),
      '/users/{id}/disable': action(
        'Disable: keys stop in every process within a second, sessions end',
        S.DisableBody,
        S.AdminUser,
      ),
      '/users/{id}/enable': action('Enable again', S.DisableBody, S.AdminUser),
      '/users/{id}/role': action('Give or take the admin role', S.RoleBody, S.AdminUser),
      '/audit': {
        get: {
          summary: 'The audit log, newest first',
          parameters: queryParams(S.AuditQuery),
          responses: { '200': ok('A page', S.AuditList), ...errors(400, 401, 403) },
        },
      },
      '/codes': {
        post: {
          summary:
            'Make count redemption codes of amount_usd each, valid until expires_at; the codes are in this answer only',
          requestBody: { required: true, content: json(S.NewCodesBody) },
          responses: { '201': ok('Made', S.NewCodes), ...errors(400, 401, 403) },
        },
        get: {
          summary: 'Codes, newest first (their prefixes, never the codes)',
          parameters: queryParams(S.CodesQuery),
          responses: { '200': ok('Codes', S.CodeList), ...errors(400, 401, 403) },
        },
      },
      '/deposits': {
        get: {
          summary: 'Deposits, newest first, by status, method and user',
          parameters: queryParams(S.DepositsAdminQuery),
          responses: { '200': ok('A page', S.AdminDepositList), ...errors(400, 401, 403) },
        },
      },
      '/deposits/{id}/confirm': {
        post: {
          summary: 'Mark a pending or expired deposit paid and credit it, once',
          parameters: [depositId],
          requestBody: { required: true, content: json(S.DepositActionBody) },
          responses: { '200': ok('Confirmed', S.AdminDeposit), ...errors(400, 401, 403, 404, 409) },
        },
      },
      '/deposits/{id}/fail': {
        post: {
          summary: 'Mark a pending or expired deposit failed',
          parameters: [depositId],
          requestBody: { required: true, content: json(S.DepositActionBody) },
          responses: { '200': ok('Failed', S.AdminDeposit), ...errors(400, 401, 403, 404, 409) },
        },
      },
      '/catalogue': {
        get: {
          summary: 'The catalogue in force: its version, where it comes from, what serves, and the document',
          responses: { '200': ok('The catalogue', S.CatalogueState), ...errors(401, 403) },
        },
        post: {
          summary:
            'Import a catalogue file (the JSON of GATEWAY_CONFIG, or an export); in force in every process at once',
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  description:
                    'The catalogue file (docs/api.md, The catalogue file), with models\' and routes\' "enabled" and routes\' "upstream_pricing"',
                },
              },
            },
          },
          responses: { '200': ok('Saved and in force', S.CatalogueState), ...errors(400, 401, 403) },
        },
      },
      '/catalogue/export': {
        get: {
          summary: 'The catalogue document as a file (gateway.config.json)',
          responses: { '200': { description: 'The catalogue file' }, ...errors(401, 403) },
        },
      },
      '/catalogue/models/{id}': {
        post: {
          summary: 'Change one model: enabled, prices, routes (order, enabled, upstream cost)',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: { required: true, content: json(S.ModelPatchBody) },
          responses: { '200': ok('Saved and in force', S.CatalogueState), ...errors(400, 401, 403, 404) },
        },
      },
      '/catalogue/models': {
        post: {
          summary:
            'Add a model with its routes (provider, upstream model name, weight, upstream cost); checked as the catalogue file is',
          requestBody: { required: true, content: json(S.NewModelBody) },
          responses: { '200': ok('Saved and in force', S.CatalogueState), ...errors(400, 401, 403, 409) },
        },
      },
      '/catalogue/load-file': {
        post: {
          summary:
            "Put the catalogue file in force again: saved as a new version (the console's switches and upstream costs go with the old one)",
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
          responses: { '200': ok('Saved and in force', S.CatalogueState), ...errors(400, 401, 403) },
        },
      },
      '/providers': {
        get: {
          summary:
            'Providers with their keys (last four characters only), where calls take their key, and the models routed to each',
          responses: { '200': ok('Providers', S.AdminProviderList), ...errors(401, 403) },
        },
        post: {
          summary: 'Add a provider (a new catalogue version)',
          requestBody: { required: true, content: json(S.NewProviderBody) },
          responses: { '201': ok('Added', S.AdminProvider), ...errors(400, 401, 403, 409) },
        },
      },
      '/providers/{id}': {
        get: {
          summary: 'One provider',
          parameters: [providerId],
          responses: { '200': ok('The provider', S.AdminProvider), ...errors(401, 403, 404) },
        },
        post: {
          summary:
            "Change a provider: dialect, base URL, output-cap field, environment key, enabled (a disabled provider's routes are out of service)",
          parameters: [providerId],
          requestBody: { required: true, content: json(S.ProviderPatchBody) },
          responses: { '200': ok('Changed', S.AdminProvider), ...errors(400, 401, 403, 404) },
        },
      },
      '/providers/{id}/keys': {
        post: {
          summary:
            "Save an API key, sealed (AES-256-GCM under PROVIDER_KEY_SECRET); keys share the provider's calls by weight",
          parameters: [providerId],
          requestBody: { required: true, content: json(S.NewProviderKeyBody) },
          responses: { '201': ok('Saved', S.ProviderKeyInfo), ...errors(400, 401, 403, 404, 409) },
        },
      },
      '/providers/{id}/keys/{key}': {
        post: {
          summary: "Change a key's label, weight or enabled",
          parameters: [providerId, keyId],
          requestBody: { required: true, content: json(S.ProviderKeyPatchBody) },
          responses: { '200': ok('Changed', S.ProviderKeyInfo), ...errors(400, 401, 403, 404) },
        },
        delete: {
          summary: 'Delete a key',
          parameters: [providerId, keyId],
          responses: { '200': ok('The provider after', S.AdminProvider), ...errors(401, 403, 404) },
        },
      },
      '/providers/{id}/test': {
        post: {
          summary:
            "One real call per enabled key (or the environment's key) to a model routed to the provider, or the one named; the vendor's status and message for each",
          parameters: [providerId],
          requestBody: { required: true, content: json(S.ProviderTestBody) },
          responses: { '200': ok('Results', S.ProviderTestAnswer), ...errors(400, 401, 403, 404) },
        },
      },
      '/health': {
        get: {
          summary:
            "Per upstream route: attempts, errors, latency to the answer's head, cooldowns; the last 5 minutes, the last day and per hour, from every process",
          responses: { '200': ok('Health', S.Health), ...errors(401, 403) },
        },
      },
      '/revenue': {
        get: {
          summary: 'Income, upstream cost and margin per day and per model; paid deposits per day and method',
          parameters: queryParams(S.RevenueQuery),
          responses: { '200': ok('Revenue', S.Revenue), ...errors(400, 401, 403) },
        },
      },
      '/requests': {
        get: {
          summary:
            'Every request across users, newest first (answered ones and refusals at $0), by user (id or email), key, model, route, status and time; next_cursor pages',
          parameters: queryParams(S.RequestLogQuery),
          responses: { '200': ok('A page', S.AdminRequestList), ...errors(400, 401, 403) },
        },
      },
      '/requests/export': {
        get: {
          summary: 'The request log with the same filters as CSV, streamed, newest first, up to 1,000,000 rows',
          parameters: queryParams(S.RequestLogExportQuery),
          responses: {
            '200': {
              description:
                'text/csv: created_at, request_id, user_id, email, key_id, key_prefix, key_name, model, route, surface, stream, status, error_code, requests, prompt_tokens, cached_tokens, completion_tokens, cost_usd, latency_ms, ttft_ms, id',
            },
            ...errors(400, 401, 403),
          },
        },
      },
      '/openapi.json': {
        get: { summary: 'This document', responses: { '200': { description: 'OpenAPI 3.1' }, ...errors(401, 403) } },
      },
    },
    components: {
      securitySchemes: {
        session: {
          type: 'http',
          scheme: 'bearer',
          description: 'A dashboard session token (POST /api/dashboard/login) of an admin',
        },
      },
      schemas: {
        Error: {
          type: 'object',
          properties: {
            error: {
              type: 'object',
              properties: { code: { type: 'string' }, message: { type: 'string' } },
              required: ['code', 'message'],
            },
          },
          required: ['error'],
        },
      },
    },
  };
}
