// Every shape of the admin API, once: valibot schemas that validate requests (and describe
// answers), from which the OpenAPI document is derived (src/server/json-schema.ts, ./openapi.ts)
// and the web client takes its types (`import type` from web/src/pages/admin/). One file per
// admin area in ./shapes/, gathered here; all kept free of Node imports for that reason.

export { ADMIN_LIMITS } from './shapes/common.js';
export * from './shapes/users.js';
export * from './shapes/audit.js';
export * from './shapes/codes.js';
export * from './shapes/deposits.js';
export * from './shapes/catalogue.js';
export * from './shapes/providers.js';
export * from './shapes/reports.js';
export * from './shapes/alerts.js';
export * from './shapes/requests.js';
