// Login attempts are limited per client address and per address and email (LOGIN_MAX_ATTEMPTS in
// LOGIN_WINDOW_S), and per email at ten times that. Clients connect from different loopback
// addresses (127.x.y.z) so the limits can be told apart.

import t from 'tap';
import { clientOf, EMAIL_FACTOR, emailTag } from '../../src/dashboard/auth.js';
import { dashboardClient, newEmail, signUp, startDashboard } from '../helpers/dashboard.js';

const MAX = 4;

t.test('a flood from one address does not lock the owner out from another', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: String(MAX), LOGIN_WINDOW_S: '600' });
  const u = await signUp(s, 'the right password');
  const attacker = dashboardClient(s.gw, t, '127.0.0.2');
  for (let i = 0; i < MAX; i++) {
    const r = await attacker('POST', '/login', { body: { email: u.email, password: `guess number ${i}` } });
    t.equal(r.status, 401, `guess ${i + 1} is judged`);
  }
  for (let i = 0; i < 5 * MAX; i++) {
    const blocked = await attacker('POST', '/login', { body: { email: u.email, password: `flood ${i}` } });
    t.equal(blocked.status, 429, `flood ${i + 1} is refused`);
    t.equal(blocked.json.error.code, 'too_many_attempts');
    const retry = Number(blocked.headers['retry-after']);
    t.ok(retry >= 1 && retry <= 600, `retry-after ${retry}`);
  }
  t.equal((await attacker('POST', '/login', { body: { email: u.email, password: 'the right password' } })).status, 429, 'even the right password waits at that address');

  // The owner, elsewhere, gets in: the flood counted against its address, not the account.
  const owner = dashboardClient(s.gw, t, '127.0.0.3');
  t.equal((await owner('POST', '/login', { body: { email: u.email, password: 'the right password' } })).status, 200);
  t.equal((await owner('POST', '/login', { body: { email: u.email, password: 'one typo' } })).status, 401, 'and may still mistype');
});

t.test(`per email: ${EMAIL_FACTOR}× the threshold, over every address together`, async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: '2', LOGIN_WINDOW_S: '600' });
  const u = await signUp(s, 'the right password');
  // Twenty addresses, two guesses each: each within its own limits, 40 for the account.
  for (let a = 1; a <= EMAIL_FACTOR; a++) {
    const c = dashboardClient(s.gw, t, `127.0.1.${a}`);
    for (let i = 0; i < 2; i++) t.equal((await c('POST', '/login', { body: { email: u.email, password: `guess ${a}.${i}` } })).status, 401);
  }
  const next = dashboardClient(s.gw, t, '127.0.2.1');
  const blocked = await next('POST', '/login', { body: { email: u.email, password: 'the right password' } });
  t.equal(blocked.status, 429, 'past 10× the threshold the account itself waits');
  t.ok(Number(blocked.headers['retry-after']) >= 1);
  // Other accounts from that address are unaffected.
  const v = await signUp(s, 'another good password');
  t.equal((await next('POST', '/login', { body: { email: v.email, password: 'another good password' } })).status, 200);

  // The window ends (simulated by clearing the counter): the owner gets in, and that clears it.
  await s.gw.gw.hot.resetHits(`login:e:${emailTag(u.email)}`);
  const owner = dashboardClient(s.gw, t, '127.0.2.2');
  t.equal((await owner('POST', '/login', { body: { email: u.email, password: 'the right password' } })).status, 200);
});

t.test('IPv6 clients are counted by /64; IPv4 on a dual-stack socket by its IPv4 address', async (t) => {
  t.equal(clientOf('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  t.equal(clientOf('2001:0DB8:0001:0002:aaaa::'), '2001:db8:1:2::/64');
  t.equal(clientOf('2001:db8::1'), '2001:db8:0:0::/64');
  t.equal(clientOf('0000:0000:0000:0000:0000:ffff:7f00:0002'), '127.0.0.2');
  t.equal(clientOf('::ffff:127.0.0.2'), '::ffff:127.0.0.2');
  t.equal(clientOf('127.0.0.2'), '127.0.0.2');
});

t.test('per address', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: String(MAX), LOGIN_WINDOW_S: '600' });
  const u = await signUp(s, 'the right password');
  const sprayer = dashboardClient(s.gw, t, '127.0.0.4');
  for (let i = 0; i < MAX; i++) {
    const r = await sprayer('POST', '/login', { body: { email: newEmail(), password: 'password123' } });
    t.equal(r.status, 401);
  }
  const blocked = await sprayer('POST', '/login', { body: { email: u.email, password: 'the right password' } });
  t.equal(blocked.status, 429, 'a fresh email from the same address is refused too');
  t.ok(Number(blocked.headers['retry-after']) >= 1);
  const elsewhere = dashboardClient(s.gw, t, '127.0.0.5');
  t.equal((await elsewhere('POST', '/login', { body: { email: u.email, password: 'the right password' } })).status, 200, 'the account itself is fine');
});

t.test('a burst of parallel guesses is held to the limit', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: String(MAX), LOGIN_WINDOW_S: '600' });
  const u = await signUp(s, 'the right password');
  const burst = dashboardClient(s.gw, t, '127.0.0.6');
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => burst('POST', '/login', { body: { email: u.email, password: `parallel guess ${i}` } })),
  );
  t.equal(results.filter((r) => r.status === 401).length, MAX, 'only MAX guesses were judged');
  t.equal(results.filter((r) => r.status === 429).length, 12 - MAX);
});

t.test('signup requests are limited the same way', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: String(MAX), LOGIN_WINDOW_S: '600' });
  const email = newEmail();
  const c = dashboardClient(s.gw, t, '127.0.0.7');
  for (let i = 0; i < MAX; i++) t.equal((await c('POST', '/register', { body: { email } })).status, 202);
  const r = await c('POST', '/register', { body: { email } });
  t.equal(r.status, 429);
  t.ok(Number(r.headers['retry-after']) >= 1);
});
