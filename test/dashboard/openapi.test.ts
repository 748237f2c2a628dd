// The OpenAPI document describes every dashboard route, and real answers fit its schemas
// (test/helpers/openapi.ts checks them) and the valibot shapes the schemas are derived from.

import t from 'tap';
import * as v from 'valibot';
import { creditUser } from '../../src/accounts/users.js';
import { createCodes } from '../../src/admin/codes.js';
import { registerAdmin } from '../../src/admin/routes.js';
import * as A from '../../src/admin/shapes.js';
import { PREFIX } from '../../src/dashboard/http.js';
import { registerDashboard } from '../../src/dashboard/routes.js';
import { ResetSent, Session, VerificationSent } from '../../src/dashboard/shapes/account.js';
import { Key, KeyList, NewKey, RevokedKey } from '../../src/dashboard/shapes/keys.js';
import { Balance, Catalog, DepositMethods, DepositPage } from '../../src/dashboard/shapes/money.js';
import { USAGE_SURFACES, UsagePage, UsageStats } from '../../src/dashboard/shapes/usage.js';
import { SURFACE_NAMES } from '../../src/dialects/index.js';
import type { RouteDef, Router } from '../../src/server/router.js';
import type { Gateway } from '../../src/services.js';
import { isEnvelope, signUp, startDashboard } from '../helpers/dashboard.js';
import { answerErrors } from '../helpers/openapi.js';

/** The shape each successful answer below is typed by on the server, by "method path status". */
const SHAPES: Record<string, v.GenericSchema> = {
  'post /register 202': VerificationSent,
  'post /login 200': Session,
  'post /password-reset 202': ResetSent,
  'post /keys 201': NewKey,
  'delete /keys/{id} 200': RevokedKey,
  'patch /keys/{id} 200': Key,
  'get /keys 200': KeyList,
  'get /usage 200': UsagePage,
  'get /usage-stats 200': UsageStats,
  'get /catalog 200': Catalog,
  'get /balance 200': Balance,
  'get /deposits 200': DepositPage,
  'get /deposit/info 200': DepositMethods,
  'post /redeem 200': A.RedeemAnswer,
  'get /alerts 200': A.Alerts,
  'post /alerts 200': A.Alerts,
};

/** Wildcard routes read their id from the path and dispatch on the method themselves. */
const WILDCARDS: Record<string, string[]> = {
  'any /keys/*': ['patch /keys/{id}', 'delete /keys/{id}'],
  'get /deposits/*': ['get /deposits/{id}'],
};

/**
 * Every route the gateway registers under /api/dashboard (by the dashboard and by the admin
 * module, which adds the user's side of its features), as the document's "method path": taken
 * from the registration itself, so a route added anywhere without its description fails.
 */
function registeredRoutes(gw: Gateway): string[] {
  const defs: RouteDef[] = [];
  const recorder = { add: (d: RouteDef) => void defs.push(d) } as unknown as Router;
  registerDashboard(recorder, gw, undefined, { host: '127.0.0.1', port: 0 });
  registerAdmin(recorder, gw);
  return defs
    .filter((d) => d.path.startsWith(`${PREFIX}/`) && d.name !== 'dashboard_unknown')
    .flatMap((d) => {
      const k = `${d.method} ${d.path.slice(PREFIX.length)}`;
      // A wildcard nobody mapped fails the comparison under its own name.
      return WILDCARDS[k] ?? [k];
    });
}

t.test('openapi document', async (t) => {
  const s = await startDashboard(t);
  const { api, gw } = s;
  const res = await api('GET', '/openapi.json');
  t.equal(res.status, 200, 'served without a session');
  const doc = res.json;
  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.servers[0].url, 'https://dash.example.test/api/dashboard');

  const routes = registeredRoutes(gw.services);
  for (const r of ['post /redeem', 'get /alerts', 'post /alerts', 'post /playground', 'get /usage.csv'])
    t.ok(routes.includes(r), `${r} is registered`);
  const documented = Object.entries(doc.paths).flatMap(([p, ops]: [string, any]) =>
    Object.keys(ops).map((m) => `${m} ${p}`),
  );
  t.same(documented.sort(), [...routes].sort(), 'exactly the routes that exist');

  // Live answers against their documented schemas.
  const u = await signUp(s);
  await creditUser(gw.services.sql, gw.services.hot, u.userId, 1_000_000_000n, {
    method: 'operator',
    amount: '1',
    currency: 'USD',
  });
  const key = await api('POST', '/keys', { token: u.session, body: { name: 'k' } });
  const limited = await api('POST', '/keys', {
    token: u.session,
    body: { rpm_limit: 5, spend_limit_usd: '1.5', spend_limit_period: 'week' },
  });
  const patched = await api('PATCH', `/keys/${limited.json.id}`, {
    token: u.session,
    body: { rpm_limit: null, spend_limit_usd: 2, spend_limit_period: 'day' },
  });
  await gw.services
    .sql`INSERT INTO usage_records (user_id, key_id, request_id, model, surface, stream, status, prompt_tokens, completion_tokens, cost_nano, official_cost_nano, ttft_ms)
                  VALUES (${u.userId}, ${key.json.id}, 'r1', 'oa-model', 'chat', true, 200, 10, 5, 123, 456, 42),
                         (${u.userId}, NULL, 'r2', 'an-model', 'messages', false, 499, 0, 0, 0, 0, NULL)`;
  const code = await createCodes(
    gw.services.sql,
    { id: null, label: 'test' },
    { count: 1, creditNano: 2_000_000_000n, expiresAt: new Date(Date.now() + 3_600_000), note: '' },
  );
  const revoked = await api('DELETE', `/keys/${key.json.id}`, { token: u.session });
  const login = await api('POST', '/login', { body: { email: u.email, password: u.password } });
  const register = await api('POST', '/register', { body: { email: 'someone@example.test' } });

  const live: [string, string, { status: number; json: any }][] = [
    ['/register', 'post', register],
    ['/login', 'post', login],
    ['/keys', 'post', key],
    ['/keys/{id}', 'delete', revoked],
    ['/keys', 'get', await api('GET', '/keys', { token: u.session })],
    ['/usage', 'get', await api('GET', '/usage?limit=1', { token: u.session })],
    ['/usage-stats', 'get', await api('GET', '/usage-stats?range=7d', { token: u.session })],
    ['/usage-stats', 'get', await api('GET', '/usage-stats', { token: u.session })],
    ['/catalog', 'get', await api('GET', '/catalog', { token: u.session })],
    ['/balance', 'get', await api('GET', '/balance', { token: u.session })],
    ['/deposits', 'get', await api('GET', '/deposits', { token: u.session })],
    ['/keys', 'get', await api('GET', '/keys')],
    ['/usage', 'get', await api('GET', '/usage?limit=0', { token: u.session })],
    ['/login', 'post', await api('POST', '/login', { body: { email: u.email, password: 'wrong password' } })],
    // No deposit method is configured here (test/payments/ covers them enabled).
    ['/deposit/info', 'get', await api('GET', '/deposit/info', { token: u.session })],
    ['/topup/qris', 'post', await api('POST', '/topup/qris', { token: u.session, body: { amount_idr: 50000 } })],
    [
      '/deposit/epusdt/create',
      'post',
      await api('POST', '/deposit/epusdt/create', { token: u.session, body: { amount_usd: 'ten' } }),
    ],
    ['/deposits/{id}', 'get', await api('GET', '/deposits/00000000-0000-4000-8000-000000000000', { token: u.session })],
    ['/keys', 'post', limited],
    ['/keys/{id}', 'patch', patched],
    [
      '/keys/{id}',
      'patch',
      await api('PATCH', `/keys/${limited.json.id}`, { token: u.session, body: { rpm_limit: 0 } }),
    ],
    [
      '/keys/{id}',
      'patch',
      await api('PATCH', '/keys/00000000-0000-4000-8000-000000000000', { token: u.session, body: {} }),
    ],
    [
      '/password',
      'post',
      await api('POST', '/password', {
        token: u.session,
        body: { current_password: 'not it', new_password: 'a new long password' },
      }),
    ],
    ['/password-reset', 'post', await api('POST', '/password-reset', { body: { email: u.email } })],
    [
      '/password-reset/confirm',
      'post',
      await api('POST', '/password-reset/confirm', {
        body: { token: 'A'.repeat(43), password: 'a new long password' },
      }),
    ],
    ['/logout-all', 'post', await api('POST', '/logout-all')],
    ['/redeem', 'post', await api('POST', '/redeem', { token: u.session, body: { code: 'NOT-A-CODE' } })],
    ['/redeem', 'post', await api('POST', '/redeem', { token: u.session, body: { code: code.codes[0] } })],
    ['/redeem', 'post', await api('POST', '/redeem', { token: u.session, body: { code: code.codes[0] } })],
    ['/redeem', 'post', await api('POST', '/redeem', { token: u.session, body: {} })],
    ['/alerts', 'get', await api('GET', '/alerts', { token: u.session })],
    ['/alerts', 'post', await api('POST', '/alerts', { token: u.session, body: { low_balance_usd: '5' } })],
    ['/alerts', 'post', await api('POST', '/alerts', { token: u.session, body: { low_balance_usd: 5 } })],
    ['/alerts', 'get', await api('GET', '/alerts')],
  ];
  for (const [p, m, r] of live) {
    t.same(answerErrors(doc, p, m, r), [], `${m} ${p} ${r.status} is documented and fits its schema`);
    if (r.status >= 400) t.ok(isEnvelope(r as any));
    else {
      const shape = SHAPES[`${m} ${p} ${r.status}`];
      t.ok(shape, `${m} ${p} ${r.status} has its shape here`);
      const fit = shape ? v.safeParse(shape, r.json) : undefined;
      t.ok(
        fit?.success,
        `${m} ${p} ${r.status} fits its shape${fit && !fit.success ? `: ${fit.issues[0].message} at ${(fit.issues[0].path ?? []).map((x) => String(x.key)).join('.')}` : ''}`,
      );
    }
  }
  t.same([...USAGE_SURFACES].sort(), [...SURFACE_NAMES].sort(), 'the usage shape names every inference surface');
  const usage = live[5][2].json;
  t.ok(usage.next_cursor, 'the usage page has a next cursor');
  t.equal(live[6][2].json.requests, 2);
  t.same(live[14][2].json, { methods: [] }, 'no method is listed without its configuration');
  t.equal(live[15][2].json.error.code, 'method_disabled');
  t.equal(live[16][2].status, 400);
  t.match(patched.json, { rpm_limit: null, spend_limit_usd: '2.000000000', spend_limit_period: 'day' });
  t.equal(live[20][2].status, 400, 'a bad limit');
  t.equal(live[21][2].status, 404, 'no such key');
  const redeemed = live.filter(([p]) => p === '/redeem').map(([, , r]) => [r.status, r.json.error?.code]);
  t.same(
    redeemed,
    [
      [400, 'invalid_code'],
      [200, undefined],
      [409, 'code_used'],
      [400, 'invalid_request'],
    ],
    'redeem: refused, credited, used, malformed',
  );
  const alerts = live.filter(([p]) => p === '/alerts').map(([, , r]) => r.status);
  t.same(alerts, [200, 200, 400, 401]);
});
