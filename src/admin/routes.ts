// /api/admin/* (API.md "Admin API"): admin sessions only, in the dashboard's envelope; and
// POST /api/dashboard/redeem, where a user redeems an admin's code, and /api/dashboard/alerts.

import { notFound } from '../dashboard/errors.js';
import { dashRoute } from '../dashboard/http.js';
import type { Router } from '../server/router.js';
import type { Gateway } from '../services.js';
import { ADMIN_PREFIX, adminRoute, requireAdmin } from './http.js';
import { adminOpenApi } from './openapi.js';
import { CATALOGUE_BODY_LIMIT, catalogueHandlers } from './catalogue.js';
import { alertHandlers } from './alerts.js';
import { codeHandlers } from './codes.js';
import { reportHandlers } from './reports.js';
import { depositAdminHandlers } from './deposits.js';
import { userHandlers } from './users.js';
import { providerHandlers } from './providers.js';
import { requestLogHandlers } from './requests.js';

export function registerAdmin(router: Router, gw: Gateway): void {
  const users = userHandlers(gw);
  const codes = codeHandlers(gw);
  const deposits = depositAdminHandlers(gw);
  const catalogue = catalogueHandlers(gw);
  const reports = reportHandlers(gw);
  const alerts = alertHandlers(gw);
  const providers = providerHandlers(gw);
  const requests = requestLogHandlers(gw);
  const openapi = JSON.stringify(adminOpenApi(gw.config.publicUrl));

  // Whether the session is an admin's: the web app shows its admin pages on a 200.
  adminRoute(router, gw, 'get', '/me', 'me', async (_ex, call) => ({
    status: 200,
    body: { id: call.actor.id, email: call.actor.label, is_admin: true },
  }));
  adminRoute(router, gw, 'get', '/users', 'users', (ex) => users.list(ex));
  adminRoute(router, gw, 'any', '/users/*', 'user', (ex, call) => users.one(ex, call));
  adminRoute(router, gw, 'get', '/audit', 'audit', (ex) => users.audit(ex));
  adminRoute(router, gw, 'post', '/codes', 'codes_create', codes.create);
  adminRoute(router, gw, 'get', '/codes', 'codes', (ex) => codes.list(ex));
  adminRoute(router, gw, 'get', '/deposits', 'deposits', (ex) => deposits.list(ex));
  adminRoute(router, gw, 'any', '/deposits/*', 'deposit', deposits.act);
  adminRoute(router, gw, 'get', '/catalogue', 'catalogue', catalogue.get);
  adminRoute(router, gw, 'post', '/catalogue', 'catalogue_import', catalogue.importFile, {
    bodyLimit: CATALOGUE_BODY_LIMIT,
  });
  adminRoute(router, gw, 'get', '/catalogue/export', 'catalogue_export', catalogue.exportFile);
  adminRoute(router, gw, 'any', '/catalogue/*', 'catalogue_model', catalogue.act);
  adminRoute(router, gw, 'get', '/providers', 'providers', providers.list);
  adminRoute(router, gw, 'post', '/providers', 'providers_add', providers.create);
  adminRoute(router, gw, 'any', '/providers/*', 'provider', providers.act);
  adminRoute(router, gw, 'get', '/health', 'health', reports.health);
  adminRoute(router, gw, 'get', '/revenue', 'revenue', (ex) => reports.revenue(ex));
  adminRoute(router, gw, 'get', '/requests', 'requests', (ex) => requests.list(ex));
  adminRoute(router, gw, 'get', '/requests/export', 'requests_export', (ex) => requests.exportCsv(ex));
  // The user's side of codes, in the dashboard API (a static path: uWS prefers it to the
  // dashboard's catch-all).
  dashRoute(router, gw, {
    method: 'post',
    path: '/api/dashboard/redeem',
    name: 'dashboard_redeem',
    handler: codes.redeem,
  });
  dashRoute(router, gw, {
    method: 'get',
    path: '/api/dashboard/alerts',
    name: 'dashboard_alerts',
    handler: alerts.get,
  });
  dashRoute(router, gw, {
    method: 'post',
    path: '/api/dashboard/alerts',
    name: 'dashboard_alerts_set',
    handler: alerts.set,
  });
  adminRoute(router, gw, 'get', '/openapi.json', 'openapi', async () => ({ status: 200, json: openapi }));

  // Unknown admin paths answer 403 to a non-admin and 404 to an admin: what exists under
  // /api/admin is itself only for admins.
  const unknown = async (ex: Parameters<Parameters<typeof dashRoute>[2]['handler']>[0]): Promise<never> => {
    await requireAdmin(gw, ex);
    throw notFound(`No such endpoint: ${ex.method} ${ex.path.slice(0, 200)}.`);
  };
  dashRoute(router, gw, { method: 'any', path: `${ADMIN_PREFIX}/*`, name: 'admin_unknown', handler: unknown });
  dashRoute(router, gw, { method: 'any', path: ADMIN_PREFIX, name: 'admin_unknown', handler: unknown });
}
