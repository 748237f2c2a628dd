// Alerts by mail (the suite's SMTP sink): a user's low balance once per crossing, with a banner;
// the admins once per unpaid or failed deposit and per route stuck in cooldown.

import t from 'tap';
import { setAdmin } from '../../src/admin/accounts.js';
import { ManualClock } from '../helpers/clock.js';
import { dashboardClient, mailText, signUp, startDashboard } from '../helpers/dashboard.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('alerts', async (t) => {
  // The gateway's rounds run when the test moves its clock on: one round per call, awaited with
  // the mails it sends. The windows in the queries are Postgres's time.
  const clock = new ManualClock();
  const round = () => clock.advance(100);
  const s = await startDashboard(
    t,
    { ALERT_CHECK_MS: '100', ALERT_DEPOSIT_UNPAID_S: '25', ALERT_ROUTE_COOLDOWN_S: '1', ROUTE_COOLDOWN_MS: '60000' },
    { clock },
  );
  const sql = s.gw.services.sql;
  const admin = await signUp(s);
  await setAdmin(sql, { id: null, label: 'test setup' }, admin.userId, true);
  const user = await signUp(s);
  const api = dashboardClient(s.gw, t);
  const adminCall = (path: string, body: unknown) => api('POST', `/api/admin${path}`, { token: admin.session, body });
  const mailsTo = (to: string) => s.sink.mails.filter((m) => m.to.includes(to));

  t.equal(
    (await s.api('POST', '/alerts', { token: user.session, body: { low_balance_usd: '0' } })).status,
    400,
    'a zero threshold is refused',
  );
  t.equal((await s.api('POST', '/alerts', { body: { low_balance_usd: '5' } })).status, 401);
  await adminCall(`/users/${user.userId}/credit`, { amount_usd: '10', reason: 'start' });
  const set = await s.api('POST', '/alerts', { token: user.session, body: { low_balance_usd: '5' } });
  t.same(set.json, { low_balance_usd: '5.000000000', below: false });

  // The crossing: one mail, and the banner.
  await adminCall(`/users/${user.userId}/debit`, { amount_usd: '6', reason: 'usage elsewhere' });
  await round();
  const mail = await s.sink.take(user.email, 0);
  t.match(mail.raw, /Subject: Your airouter balance is below \$5\.000000000/);
  t.match(mailText(mail.raw), /Your balance is \$4\.000000000/);
  t.same(
    (await s.api('GET', '/alerts', { token: user.session })).json,
    { low_balance_usd: '5.000000000', below: true },
    'the banner is up',
  );
  await adminCall(`/users/${user.userId}/debit`, { amount_usd: '1', reason: 'more usage' });
  await round();
  await round();
  t.equal(mailsTo(user.email).length, 2, 'still below: no second mail (the first is the verification mail)');

  // Back above, then below again: the next crossing mails again, once.
  await adminCall(`/users/${user.userId}/credit`, { amount_usd: '10', reason: 'top-up' });
  await round();
  t.equal((await s.api('GET', '/alerts', { token: user.session })).json.below, false, 'the banner is down');
  await adminCall(`/users/${user.userId}/debit`, { amount_usd: '10', reason: 'usage' });
  await round();
  await s.sink.take(user.email, 0);
  await round();
  await round();
  t.equal(mailsTo(user.email).length, 3, 'one mail per crossing');

  // Admins: a deposit that stays unpaid, one that failed, a route that stays in cooldown. The
  // unpaid threshold leaves the fresh deposit 25 s: a loaded CI run took over 5 s here.
  const [stale] = await sql<{ id: string }[]>`
    INSERT INTO deposits (user_id, method, status, amount, currency, credit_nano, provider, created_at, expires_at)
    VALUES (${user.userId}, 'epusdt', 'pending', 7, 'USD', 7000000000, 'epusdt', now() - interval '45 seconds', now() + interval '1 hour') RETURNING id`;
  await sql`INSERT INTO deposits (user_id, method, status, amount, currency, credit_nano, provider) VALUES (${user.userId}, 'qris', 'failed', 50000, 'IDR', 3000000000, 'qris')`;
  await sql`INSERT INTO deposits (user_id, method, status, amount, currency, credit_nano, provider, expires_at) VALUES (${user.userId}, 'qris', 'pending', 60000, 'IDR', 3000000000, 'qris', now() + interval '1 hour')`;
  const u = await s.gw.user('1');
  const r = await fetch(`${s.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fallback-model', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(r.status, 200, 'served by the second route; the first cools down');
  await r.arrayBuffer();

  const subjects = () => mailsTo(admin.email).map((m) => /Subject: (.*)/.exec(m.raw)?.[1] ?? '');
  // The route's cooldown must have lasted ALERT_ROUTE_COOLDOWN_S by Postgres's clock: rounds
  // until the three are in, a real second or so.
  const until = Date.now() + 12_000;
  while (mailsTo(admin.email).length < 4 && Date.now() < until) {
    await round();
    await sleep(100);
  }
  const got = subjects();
  for (let i = 0; i < 5; i++) await round();
  const after = subjects();
  t.equal(
    after.length,
    4,
    `the admin got exactly three alerts besides the verification mail (${JSON.stringify(after)})`,
  );
  t.ok(
    got.some((x) => /^Deposit unpaid for 0 minutes: 7 USD \(epusdt\)/.test(x)),
    'the unpaid deposit',
  );
  t.ok(
    got.some((x) => /^Deposit failed: 50000 IDR \(qris\)/.test(x)),
    'the failed deposit',
  );
  t.ok(
    got.some((x) => /^Upstream route dead\/x has been cooling down since/.test(x)),
    'the route in cooldown',
  );
  t.notOk(
    got.some((x) => /60000 IDR/.test(x)),
    'a deposit pending for less than ALERT_DEPOSIT_UNPAID_S is not mailed',
  );
  t.match(
    mailText(mailsTo(admin.email).find((m) => m.raw.includes(stale.id))!.raw),
    /admin\/deposits/,
    'with the link to act on it',
  );
});
