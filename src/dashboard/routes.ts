import { DEPOSIT_METHODS, type DepositMethodId } from '../payments/configs.js';
import type { Gateway } from '../services.js';
import type { Router } from '../server/router.js';
import { accountHandlers } from './account.js';
import { authHandlers } from './auth.js';
import { DEPOSIT_ALIASES, depositHandlers } from './deposits.js';
import { notFound } from './errors.js';
import { dashRoute, PREFIX } from './http.js';
import { keyHandlers } from './keys.js';
import { createMailer, type Mailer } from './mail.js';
import { openApiDocument } from './openapi.js';
import { passwordHandlers } from './passwords.js';
import { registerPlayground, type SelfAddress } from './playground.js';
import { publicStatsHandler } from './public-stats.js';
import { usageHandlers } from './usage.js';
import { usageExportHandler } from './usage-export.js';

/** The dashboard API (API.md §3), GET /api/public/stats and GET /api/public/models. */
/** `self` is where this process listens (its port is filled in once it does): the playground calls the inference surface there. */
export function registerDashboard(
  router: Router,
  gw: Gateway,
  mailer: Mailer = createMailer(gw.config, gw.log),
  self?: SelfAddress,
): void {
  const auth = authHandlers(gw, mailer);
  const passwords = passwordHandlers(gw, mailer);
  const keys = keyHandlers(gw);
  const usage = usageHandlers(gw);
  const account = accountHandlers(gw);
  const deposits = depositHandlers(gw);
  const openapi = JSON.stringify(openApiDocument(gw.config.publicUrl));

  const unknown = async (ex: { method: string; path: string }): Promise<never> => {
    throw notFound(`No such endpoint: ${ex.method} ${ex.path.slice(0, 200)}.`);
  };
  const route = (
    method: 'get' | 'post',
    path: string,
    name: string,
    handler: Parameters<typeof dashRoute>[2]['handler'],
  ) => dashRoute(router, gw, { method, path: PREFIX + path, name: `dashboard_${name}`, handler });

  route('post', '/register', 'register', auth.register);
  route('post', '/verify', 'verify', auth.verify);
  route('post', '/login', 'login', auth.login);
  route('post', '/logout', 'logout', auth.logout);
  route('post', '/logout-all', 'logout_all', passwords.logoutAll);
  route('post', '/password', 'password_change', passwords.change);
  route('post', '/password-reset', 'password_reset', passwords.requestReset);
  route('post', '/password-reset/confirm', 'password_reset_confirm', passwords.confirmReset);
  route('get', '/keys', 'keys_list', keys.list);
  route('post', '/keys', 'keys_create', keys.create);
  // Two workarounds for src/server until it is fixed there: Router registers 'delete' as
  // app.delete, which uWS calls `del`, and Exchange decodes `:id` parameters with a bare
  // decodeURIComponent that throws (and aborts the process) on a malformed %-escape. A
  // wildcard route has no parameters; the handler reads the id from the path itself.
  dashRoute(router, gw, {
    method: 'any',
    path: `${PREFIX}/keys/*`,
    name: 'dashboard_key',
    handler: (ex) => (ex.method === 'DELETE' ? keys.revoke(ex) : ex.method === 'PATCH' ? keys.update(ex) : unknown(ex)),
  });
  route('get', '/usage', 'usage', usage.list);
  route('get', '/usage.csv', 'usage_csv', usageExportHandler(gw));
  route('get', '/usage-stats', 'usage_stats', usage.stats);
  route('get', '/catalog', 'catalog', account.catalogue);
  route('get', '/balance', 'balance', account.balance);
  route('get', '/deposits', 'deposits', account.deposits);
  route('get', '/deposits/*', 'deposit', deposits.one);
  route('get', '/deposit/info', 'deposit_info', deposits.info);
  // POST /deposits/{method} for each registered method; the two older paths are aliases of it
  // (the same handler), kept for clients written against them.
  for (const method of DEPOSIT_METHODS)
    route('post', `/deposits/${method}`, `deposit_open_${method}`, deposits.open(method));
  for (const [method, path] of Object.entries(DEPOSIT_ALIASES))
    route('post', path, path.slice(1).replaceAll('/', '_'), deposits.open(method as DepositMethodId));
  if (self) registerPlayground(router, gw, self);
  route('get', '/openapi.json', 'openapi', async () => ({
    status: 200,
    json: openapi,
    headers: { 'cache-control': 'public, max-age=300' },
  }));

  dashRoute(router, gw, { method: 'any', path: `${PREFIX}/*`, name: 'dashboard_unknown', handler: unknown });
  dashRoute(router, gw, { method: 'any', path: PREFIX, name: 'dashboard_unknown', handler: unknown });

  dashRoute(router, gw, {
    method: 'get',
    path: '/api/public/stats',
    name: 'public_stats',
    handler: publicStatsHandler(gw),
  });
  dashRoute(router, gw, {
    method: 'get',
    path: '/api/public/models',
    name: 'public_models',
    handler: account.publicCatalogue,
  });
  dashRoute(router, gw, { method: 'any', path: '/api/public/*', name: 'public_unknown', handler: unknown });
}
