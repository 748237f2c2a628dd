// /api/admin/deposits: all deposits by status, method and user; confirmed (credited once) or
// failed by hand with a reason, each in the audit log.

import t from 'tap';
import { setAdmin } from '../../src/admin/accounts.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { dashboardClient, signUp, startDashboard } from '../helpers/dashboard.js';
import * as v from 'valibot';
import { AdminDeposit, AdminDepositList } from '../../src/admin/shapes.js';

t.test('deposits by hand', async (t) => {
  const s = await startDashboard(t);
  const sql = s.gw.services.sql;
  const admin = await signUp(s);
  await setAdmin(sql, { id: null, label: 'test setup' }, admin.userId, true);
  const user = await signUp(s);
  const api = dashboardClient(s.gw, t);
  const call = (method: string, path: string, body?: unknown, token = admin.session) =>
    api(method, `/api/admin${path}`, { token, body });

  const insert = async (method: string, status: string, credit: bigint, provider: string | null) => {
    const [d] = await sql<{ id: string }[]>`
      INSERT INTO deposits (user_id, method, status, amount, currency, credit_nano, provider, expires_at, paid_at)
      VALUES (${user.userId}, ${method}, ${status}, 1, 'USD', ${credit.toString()}, ${provider}, now() + interval '1 hour', ${status === 'paid' ? new Date() : null})
      RETURNING id`;
    return d.id;
  };
  const pending = await insert('qris', 'pending', 1_000_000_003n, 'qris');
  const expired = await insert('epusdt', 'expired', 2_000_000_000n, 'epusdt');
  const stale = await insert('epusdt', 'pending', 4_000_000_000n, 'epusdt');
  // A paid deposit credits the balance in the same transaction; here both by hand, as a provider's would.
  await insert('qris', 'paid', 500_000_000n, 'qris');
  await sql`UPDATE users SET balance_nano = balance_nano + 500000000 WHERE id = ${user.userId}`;

  for (const path of ['/deposits', `/deposits/${pending}/confirm`, `/deposits/${pending}/fail`]) {
    const r = await call(
      path === '/deposits' ? 'GET' : 'POST',
      path,
      path === '/deposits' ? undefined : { reason: 'x' },
      user.session,
    );
    t.equal(r.status, 403, `${path}: a user's session is refused`);
  }
  const all = await call('GET', '/deposits');
  t.equal(all.status, 200, all.text);
  t.equal(all.json.data.length, 4);
  t.ok(v.safeParse(AdminDepositList, all.json).success, 'GET /deposits fits its documented shape');
  t.ok(
    all.json.data.every((d: { email: string }) => d.email === user.email),
    "with the user's address",
  );
  t.same(
    (await call('GET', '/deposits?status=pending')).json.data.map((d: { id: string }) => d.id).sort(),
    [pending, stale].sort(),
    'by status',
  );
  t.same(
    (await call('GET', '/deposits?method=epusdt&status=expired')).json.data.map((d: { id: string }) => d.id),
    [expired],
    'by method and status',
  );
  t.equal((await call('GET', `/deposits?user=${admin.userId}`)).json.data.length, 0, 'by user');
  t.equal((await call('GET', '/deposits?status=unknown')).status, 400);
  const seen: string[] = [];
  const cursors: (string | null)[] = [];
  let before: string | null = null;
  do {
    const page: { json: { data: { id: string }[]; next_before: string | null } } = await call(
      'GET',
      `/deposits?limit=1${before ? `&before=${before}` : ''}`,
    );
    seen.push(...page.json.data.map((d) => d.id));
    before = page.json.next_before;
    cursors.push(before);
  } while (before);
  t.same(
    seen,
    all.json.data.map((d: { id: string }) => d.id),
    'pages one by one give the same list (microseconds apart: the cursor keeps them)',
    { cursors },
  );

  // Confirm: credited once, with the reason; an expired one may be confirmed too.
  t.equal((await call('POST', `/deposits/${pending}/confirm`, {})).status, 400, 'a reason is required');
  const confirmed = await call('POST', `/deposits/${pending}/confirm`, {
    reason: 'seen in the bank statement',
    reference: 'BCA-778',
  });
  t.equal(confirmed.status, 200, confirmed.text);
  t.match(confirmed.json, {
    status: 'paid',
    reference: 'BCA-778',
    credit_usd: '1.000000003',
    balance_usd: '1.500000003',
  });
  const twice = await call('POST', `/deposits/${pending}/confirm`, { reason: 'again' });
  t.equal(twice.status, 409);
  t.equal(twice.json.error.code, 'already_paid', 'a second confirm credits nothing');
  t.equal(
    (await call('POST', `/deposits/${expired}/confirm`, { reason: 'paid late' })).json.balance_usd,
    '3.500000003',
  );

  // Fail: pending (or expired) only; a failed one is never confirmed by the same button.
  const failed = await call('POST', `/deposits/${stale}/fail`, { reason: 'customer cancelled' });
  t.equal(failed.json.status, 'failed');
  t.ok(v.safeParse(AdminDeposit, failed.json).success, 'POST /deposits/{id}/fail fits its documented shape');
  t.equal((await call('POST', `/deposits/${stale}/fail`, { reason: 'x' })).json.error.code, 'not_open');
  t.equal(
    (await call('POST', `/deposits/${pending}/fail`, { reason: 'x' })).json.error.code,
    'not_open',
    'a paid deposit cannot be failed',
  );
  t.equal((await call('POST', `/deposits/${stale}/confirm`, { reason: 'x' })).json.error.code, 'not_confirmed');
  t.equal((await call('POST', '/deposits/00000000-0000-4000-8000-000000000000/confirm', { reason: 'x' })).status, 404);

  t.equal(
    (await s.api('GET', '/balance', { token: user.session })).json.balance_usd,
    '3.500000003',
    'the user sees the credits',
  );
  t.ok((await reconcile(sql, s.gw.services.hot)).ok, 'and the ledger reconciles');
  const audit = await call('GET', '/audit');
  t.same(
    audit.json.data
      .slice(0, 3)
      .map((e: { action: string; target: string; reason: string }) => [e.action, e.target, e.reason]),
    [
      ['deposit.fail', stale, 'customer cancelled'],
      ['deposit.confirm', expired, 'paid late'],
      ['deposit.confirm', pending, 'seen in the bank statement'],
    ],
    'each action is in the audit log with its reason',
  );
});
