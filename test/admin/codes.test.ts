// Redemption codes: made by an admin (shown once), redeemed by users on the dashboard API; each
// credits exactly once, even when 50 sessions redeem it at the same moment.

import t from 'tap';
import { setAdmin } from '../../src/admin/accounts.js';
import { createVerifiedUser } from '../../src/accounts/users.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { openSession } from '../../src/dashboard/sessions.js';
import { dashboardClient, signUp, startDashboard } from '../helpers/dashboard.js';
import { uniqueName } from '../helpers/stores.js';
import * as v from 'valibot';
import { CodeList, NewCodes, RedeemAnswer } from '../../src/admin/shapes.js';

t.test('redemption codes', async (t) => {
  const s = await startDashboard(t);
  const sql = s.gw.services.sql;
  const admin = await signUp(s);
  await setAdmin(sql, { id: null, label: 'test setup' }, admin.userId, true);
  const user = await signUp(s);
  const api = dashboardClient(s.gw, t);
  const adminCall = (method: string, path: string, body?: unknown, token = admin.session) =>
    api(method, `/api/admin${path}`, { token, body });
  const redeem = (code: unknown, token = user.session) => api('POST', '/redeem', { token, body: { code } });

  const inADay = new Date(Date.now() + 86_400_000).toISOString();
  t.equal(
    (await adminCall('POST', '/codes', { count: 2, amount_usd: '1', expires_at: inADay }, user.session)).status,
    403,
    'a user cannot make codes',
  );
  t.equal((await adminCall('GET', '/codes', undefined, user.session)).status, 403, 'or list them');
  for (const bad of [
    { count: 0 },
    { count: 1001 },
    { amount_usd: '0' },
    { amount_usd: 2 },
    { expires_at: '2020-01-01T00:00:00Z' },
    { expires_at: 'tomorrow' },
  ]) {
    const r = await adminCall('POST', '/codes', { count: 3, amount_usd: '2.5', expires_at: inADay, ...bad });
    t.equal(r.status, 400, `refused: ${JSON.stringify(bad)}`);
  }
  const made = await adminCall('POST', '/codes', {
    count: 3,
    amount_usd: '2.500000001',
    expires_at: inADay,
    note: 'launch',
  });
  t.equal(made.status, 201, made.text);
  t.equal(made.json.codes.length, 3);
  t.ok(v.safeParse(NewCodes, made.json).success, 'POST /codes fits its documented shape');
  t.equal(new Set(made.json.codes).size, 3, 'every code differs');
  for (const c of made.json.codes) t.match(c, /^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){3}$/);
  const [stored] = await sql<{ n: number; plain: number }[]>`
    SELECT count(*)::int AS n, count(*) FILTER (WHERE code_hash = ANY(${made.json.codes}))::int AS plain FROM redemption_codes`;
  t.same({ ...stored }, { n: 3, plain: 0 }, 'stored by hash only');

  // Redeemed once, typed loosely.
  const [c1, c2, c3] = made.json.codes as string[];
  const ok = await redeem(` ${c1.toLowerCase().replace(/-/g, ' ')} `);
  t.equal(ok.status, 200, ok.text);
  t.same(ok.json, { credited_usd: '2.500000001', balance_usd: '2.500000001' });
  t.ok(v.safeParse(RedeemAnswer, ok.json).success, 'POST /redeem fits its documented shape');
  t.equal(
    (await s.api('GET', '/balance', { token: user.session })).json.balance_usd,
    '2.500000001',
    'the balance has it at once',
  );
  const again = await redeem(c1);
  t.equal(again.status, 409);
  t.equal(again.json.error.code, 'code_used', 'a second redemption is refused');
  const unknown = await redeem('AAAAA-AAAAA-AAAAA-AAAAA');
  t.equal(unknown.json.error.code, 'invalid_code');
  t.equal((await api('POST', '/redeem', { body: { code: c2 } })).status, 401, 'redeeming needs a session');

  await sql`UPDATE redemption_codes SET expires_at = now() - interval '1 second' WHERE code_hash = encode(sha256(${c3.replace(/-/g, '')}::bytea), 'hex')`;
  const expired = await redeem(c3);
  t.equal(expired.json.error.code, 'code_expired', 'an expired code credits nothing');

  // 50 users at once, one code.
  const sessions = await Promise.all(
    Array.from({ length: 50 }, async () => {
      const u = await createVerifiedUser(sql, `${uniqueName('r')}@example.test`);
      return { id: u.id, token: (await openSession(sql, u.id, 3600)).token };
    }),
  );
  const raced = await Promise.all(sessions.map((u) => redeem(c2, u.token)));
  const statuses = raced.map((r) => r.status).sort();
  t.same(
    statuses,
    [...Array(49).fill(409), 200].sort(),
    'exactly one of 50 redemptions succeeds; the others are told it is used',
  );
  const [{ credited, deposits }] = await sql<{ credited: bigint; deposits: number }[]>`
    SELECT coalesce(sum(balance_nano), 0)::bigint AS credited,
           (SELECT count(*)::int FROM deposits WHERE method = 'code' AND user_id = ANY(${sessions.map((u) => u.id)}::uuid[])) AS deposits
    FROM users WHERE id = ANY(${sessions.map((u) => u.id)}::uuid[])`;
  t.equal(credited, 2_500_000_001n, 'one credit among the 50');
  t.equal(deposits, 1, 'one deposit');
  t.ok((await reconcile(sql, s.gw.services.hot)).ok, 'the ledger reconciles');

  const list = await adminCall('GET', '/codes');
  t.ok(v.safeParse(CodeList, list.json).success, 'GET /codes fits its documented shape');
  t.same(list.json.data.map((c: { status: string }) => c.status).sort(), ['expired', 'redeemed', 'redeemed']);
  t.equal((await adminCall('GET', '/codes?status=redeemed')).json.data.length, 2);
  t.ok(
    list.json.data.every((c: { prefix: string }) => made.json.codes.some((code: string) => code.startsWith(c.prefix))),
    'listed by prefix',
  );
  const audit = await adminCall('GET', '/audit?action=codes.create');
  t.match(
    audit.json.data[0],
    { actor: admin.email, target: made.json.batch_id, after: { count: 3, amount_usd: '2.500000001' } },
    'making codes is audited',
  );
});
