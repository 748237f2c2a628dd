// /api/admin: only an admin's session gets in; credits and debits are ledger entries that
// reconcile exactly; a disabled user is out at once; every admin action is in the audit log,
// which nobody can rewrite.

import t from 'tap';
import type * as Tap from 'tap';
import { setAdmin } from '../../src/admin/accounts.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { dashboardClient, isEnvelope, signUp, startDashboard } from '../helpers/dashboard.js';
import { createKey } from '../../src/accounts/keys.js';
import * as v from 'valibot';
import * as S from '../../src/admin/shapes.js';

/** An answer against the schema its OpenAPI description is derived from. */
function fits(t: Tap.Test, schema: v.GenericSchema, value: unknown, what: string) {
  const r = v.safeParse(schema, value);
  t.ok(
    r.success,
    `${what} fits its documented shape${r.success ? '' : `: ${r.issues[0].message} at ${(r.issues[0].path ?? []).map((p) => String(p.key)).join('.')}`}`,
  );
}

t.test('admin API', async (t) => {
  const s = await startDashboard(t);
  const { gw } = s;
  const sql = gw.services.sql;
  const admin = await signUp(s);
  const other = await signUp(s);
  const user = await signUp(s);
  const system = { id: null, label: 'test setup' };
  await setAdmin(sql, system, admin.userId, true);
  await setAdmin(sql, system, other.userId, true);
  const key = await createKey(sql, user.userId, 'k');
  const adminApi = dashboardClient(gw, t);
  const call = (method: string, path: string, token?: string, body?: unknown) =>
    adminApi(method, `/api/admin${path}`, { token, body });

  const routes: [string, string, unknown?][] = [
    ['GET', '/me'],
    ['GET', '/users'],
    ['GET', `/users/${user.userId}`],
    ['POST', `/users/${user.userId}/credit`, { amount_usd: '1', reason: 'x' }],
    ['POST', `/users/${user.userId}/debit`, { amount_usd: '1', reason: 'x' }],
    ['POST', `/users/${user.userId}/disable`, {}],
    ['POST', `/users/${user.userId}/enable`, {}],
    ['POST', `/users/${user.userId}/role`, { admin: true }],
    ['GET', '/audit'],
    ['POST', '/codes', { count: 1, amount_usd: '1', expires_at: '2999-01-01T00:00:00Z' }],
    ['GET', '/codes'],
    ['GET', '/deposits'],
    ['GET', '/catalogue'],
    ['GET', '/health'],
    ['GET', '/revenue'],
    ['GET', '/requests'],
    ['GET', '/providers'],
    ['POST', '/providers/fake-openai/test', {}],
    ['GET', '/requests/export'],
    ['GET', '/catalogue/export'],
    ['POST', '/catalogue', { providers: [], models: [] }],
    ['POST', '/catalogue/models/oa-model', { enabled: false }],
    ['POST', '/deposits/00000000-0000-4000-8000-000000000000/confirm', { reason: 'x' }],
    ['GET', '/openapi.json'],
    ['GET', '/no-such-thing'],
    ['GET', ''],
  ];
  for (const [method, path, body] of routes) {
    const anon = await call(method, path, undefined, body);
    t.equal(anon.status, 401, `${method} ${path} without a session: 401`);
    const r = await call(method, path, user.session, body);
    t.equal(r.status, 403, `${method} ${path} with a user's session: 403`);
    t.ok(isEnvelope(r) && r.json.error.code === 'forbidden', "in the dashboard's envelope");
  }
  t.equal((await gw.services.ledger.balance(user.userId)).balance, 0n, 'no refused call moved money');
  const [{ n: noAudit }] = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM admin_audit WHERE action NOT IN ('user.promote')`;
  t.equal(noAudit, 0, 'nor changed anything');

  // Search, then the account.
  const found = await call('GET', `/users?q=${encodeURIComponent(user.email.slice(0, 12))}`, admin.session);
  t.equal(found.status, 200);
  t.same(
    found.json.data.map((u: { id: string }) => u.id),
    [user.userId],
    'found by a part of the address',
  );
  const page = await call('GET', '/users?limit=2', admin.session);
  t.equal(page.json.data.length, 2);
  t.ok(page.json.next_after, 'pages on');
  const rest = await call('GET', `/users?limit=2&after=${encodeURIComponent(page.json.next_after)}`, admin.session);
  t.equal(page.json.data.length + rest.json.data.length, 3, 'every account once across the pages');
  const wild = await call('GET', '/users?q=%25', admin.session);
  t.same(wild.json.data, [], "LIKE's wildcards in the search are taken literally");
  const short = await call('GET', `/users?q=${encodeURIComponent(user.email.slice(0, 2))}`, admin.session);
  t.ok(
    short.json.data.some((u: { id: string }) => u.id === user.userId),
    'a search shorter than a trigram still finds',
  );
  const first = await call('GET', '/users?q=%40&limit=1', admin.session);
  const next = await call(
    'GET',
    `/users?q=%40&limit=5&after=${encodeURIComponent(first.json.next_after)}`,
    admin.session,
  );
  t.same(
    [...first.json.data, ...next.json.data].map((u: { email: string }) => u.email),
    [...page.json.data, ...rest.json.data].map((u: { email: string }) => u.email),
    'a search pages as the list does',
  );

  // Credit and debit: entries with reasons, exact to the nano-dollar.
  const credit = await call('POST', `/users/${user.userId}/credit`, admin.session, {
    amount_usd: '5.000000007',
    reason: 'goodwill',
  });
  t.equal(credit.status, 200, credit.text);
  t.same(
    { before: credit.json.balance_before_usd, after: credit.json.balance_usd },
    { before: '0.000000000', after: '5.000000007' },
  );
  const debit = await call('POST', `/users/${user.userId}/debit`, other.session, {
    amount_usd: '2.000000002',
    reason: 'chargeback',
  });
  t.equal(debit.json.balance_usd, '3.000000005', 'debited');
  const tooMuch = await call('POST', `/users/${user.userId}/debit`, admin.session, {
    amount_usd: '3.000000006',
    reason: 'x',
  });
  t.equal(tooMuch.status, 409, 'a debit past the balance is refused');
  t.equal(tooMuch.json.error.code, 'insufficient_balance');
  const noReason = await call('POST', `/users/${user.userId}/credit`, admin.session, { amount_usd: '1' });
  t.equal(noReason.status, 400, 'a credit needs a reason');
  t.match(noReason.json.error.message, /"reason" is required/);
  for (const amount_usd of ['0', '-1', '1.0000000001', 1]) {
    t.equal(
      (await call('POST', `/users/${user.userId}/credit`, admin.session, { amount_usd, reason: 'x' })).status,
      400,
      `amount ${JSON.stringify(amount_usd)} refused`,
    );
  }
  const mine = await s.api('GET', '/balance', { token: user.session });
  t.equal(mine.json.balance_usd, '3.000000005', 'the user sees it at once (the hot balance moved too)');
  const rec = await reconcile(sql, gw.services.hot);
  t.ok(
    rec.ok,
    `reconcile: exact (${JSON.stringify(rec.mismatches.concat(rec.hotMismatches as never[]), (_k, v) => (typeof v === 'bigint' ? v.toString() : v))})`,
  );
  t.ok(rec.hotAccounts >= 1, 'the hot account was compared too');

  const detail = await call('GET', `/users/${user.userId}`, admin.session);
  t.equal(detail.status, 200);
  fits(t, S.AdminUserDetail, detail.json, 'GET /users/{id}');
  fits(t, S.AdminUserList, found.json, 'GET /users');
  fits(t, S.AdjustAnswer, credit.json, 'POST /users/{id}/credit');
  t.same(detail.json.balance, {
    balance_usd: '3.000000005',
    reserved_usd: '0.000000000',
    available_usd: '3.000000005',
  });
  t.same(
    detail.json.keys.map((k: { id: string }) => k.id),
    [key.id],
    'their keys',
  );
  t.same(
    detail.json.adjustments.map((a: { amount_usd: string; reason: string; actor: string }) => [
      a.amount_usd,
      a.reason,
      a.actor,
    ]),
    [
      ['-2.000000002', 'chargeback', other.email],
      ['5.000000007', 'goodwill', admin.email],
    ],
  );
  t.same(detail.json.usage, [], 'no usage yet');
  t.equal((await call('GET', '/users/00000000-0000-4000-8000-000000000000', admin.session)).status, 404);
  t.equal((await call('GET', '/users/not-a-uuid', admin.session)).status, 404);

  // Disable: keys, sessions and sign-in stop; enable brings the keys back.
  const models = (k: string) =>
    fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${k}` } }).then((r) => r.status);
  t.equal(await models(key.key), 200);
  const disabled = await call('POST', `/users/${user.userId}/disable`, admin.session, { reason: 'fraud' });
  t.equal(disabled.status, 200);
  t.equal(disabled.json.disabled, true);
  t.equal(await models(key.key), 401, 'the key stops at once');
  t.equal((await s.api('GET', '/balance', { token: user.session })).status, 401, 'the session is ended');
  t.equal(
    (await s.api('POST', '/login', { body: { email: user.email, password: user.password } })).status,
    401,
    'and sign-in refused',
  );
  t.equal(
    (await call('POST', `/users/${admin.userId}/disable`, admin.session, {})).status,
    400,
    'an admin cannot lock themselves out',
  );
  t.equal((await call('POST', `/users/${user.userId}/enable`, admin.session, {})).json.disabled, false);
  t.equal(await models(key.key), 200, 'enabled: the key works again');
  t.equal(
    (await s.api('POST', '/login', { body: { email: user.email, password: user.password } })).status,
    200,
    'and sign-in too',
  );

  // The audit log: every action, whoever made it, with before and after.
  const audit = await call('GET', '/audit?limit=100', admin.session);
  t.equal(audit.status, 200);
  fits(t, S.AuditList, audit.json, 'GET /audit');
  fits(t, S.AdminUser, disabled.json, 'POST /users/{id}/disable');
  const byOther = audit.json.data.find((e: { action: string }) => e.action === 'user.debit');
  t.match(
    byOther,
    {
      actor: other.email,
      actor_id: other.userId,
      target: user.email,
      reason: 'chargeback',
      before: { balance_usd: '5.000000007' },
      after: { balance_usd: '3.000000005', amount_usd: '-2.000000002' },
    },
    "another admin's entry is visible, with before and after",
  );
  t.same(
    audit.json.data.map((e: { action: string }) => e.action).slice(0, 4),
    ['user.enable', 'user.disable', 'user.debit', 'user.credit'],
    'newest first',
  );
  const paged = await call('GET', `/audit?limit=1&before=${audit.json.data[0].id}`, admin.session);
  t.equal(paged.json.data[0].id, audit.json.data[1].id, 'pages back by id');
  await t.rejects(sql`UPDATE admin_audit SET actor = 'someone else'`, /append-only/, 'no entry can be changed');
  await t.rejects(sql`DELETE FROM admin_audit`, /append-only/, 'or deleted');

  // A demoted admin is out on their next call.
  t.equal((await call('POST', `/users/${other.userId}/role`, admin.session, { admin: false })).json.is_admin, false);
  t.equal((await call('GET', '/users', other.session)).status, 403, 'a demoted admin gets 403');

  const doc = await call('GET', '/openapi.json', admin.session);
  const documented = Object.entries(doc.json.paths).flatMap(([p, ops]) =>
    Object.keys(ops as object).map((m) => `${m} ${p}`),
  );
  t.same(
    documented.sort(),
    [
      'get /me',
      'get /users',
      'get /users/{id}',
      'post /users/{id}/credit',
      'post /users/{id}/debit',
      'post /users/{id}/disable',
      'post /users/{id}/enable',
      'post /users/{id}/role',
      'get /audit',
      'get /openapi.json',
      'post /codes',
      'get /codes',
      'get /deposits',
      'post /deposits/{id}/confirm',
      'post /deposits/{id}/fail',
      'get /catalogue',
      'post /catalogue',
      'get /catalogue/export',
      'post /catalogue/models/{id}',
      'get /health',
      'get /revenue',
      'get /requests',
      'get /requests/export',
      'post /catalogue/models',
      'post /catalogue/load-file',
      'get /providers',
      'post /providers',
      'get /providers/{id}',
      'post /providers/{id}',
      'post /providers/{id}/keys',
      'post /providers/{id}/keys/{key}',
      'delete /providers/{id}/keys/{key}',
      'post /providers/{id}/test',
    ].sort(),
  );
  t.same(
    doc.json.paths['/users/{id}/credit'].post.requestBody.content['application/json'].schema.required,
    ['amount_usd', 'reason'],
    'request schemas come from the validators',
  );
});
