// Login attempts are limited per email and per client address (LOGIN_MAX_ATTEMPTS in
// LOGIN_WINDOW_S). Clients connect from different loopback addresses (127.0.0.x) so the two
// limits can be told apart.

import t from 'tap';
import { emailTag } from '../../src/dashboard/auth.js';
import { dashboardClient, newEmail, signUp, startDashboard } from '../helpers/dashboard.js';

const MAX = 4;

t.test('per email', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: String(MAX), LOGIN_WINDOW_S: '600' });
  const u = await signUp(s, 'the right password');
  const attacker = dashboardClient(s.gw, t, '127.0.0.2');
  for (let i = 0; i < MAX; i++) {
    const r = await attacker('POST', '/login', { body: { email: u.email, password: `guess number ${i}` } });
    t.equal(r.status, 401, `guess ${i + 1} is judged`);
  }
  const blocked = await attacker('POST', '/login', { body: { email: u.email, password: 'guess number 99' } });
  t.equal(blocked.status, 429);
  t.equal(blocked.json.error.code, 'too_many_attempts');
  const retry = Number(blocked.headers['retry-after']);
  t.ok(retry >= 1 && retry <= 600, `retry-after ${retry}`);

  // From another address, even the right password waits: the account is what is protected.
  const owner = dashboardClient(s.gw, t, '127.0.0.3');
  const right = await owner('POST', '/login', { body: { email: u.email, password: 'the right password' } });
  t.equal(right.status, 429);
  t.ok(Number(right.headers['retry-after']) >= 1);
  // Other accounts from that address are unaffected.
  const v = await signUp(s, 'another good password');
  t.equal((await owner('POST', '/login', { body: { email: v.email, password: 'another good password' } })).status, 200);

  // The window ends (simulated by clearing the counter): the owner gets in, and that clears it.
  await s.gw.gw.hot.resetHits(`login:e:${emailTag(u.email)}`);
  t.equal((await owner('POST', '/login', { body: { email: u.email, password: 'the right password' } })).status, 200);
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
