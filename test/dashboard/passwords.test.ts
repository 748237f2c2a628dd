// Password change, reset by a mailed link, sign out everywhere, and where mailed links point.

import t from 'tap';
import { request } from 'undici';
import { mailText, newEmail, sharedDashboard, signUp, startDashboard, verifyLinkToken } from '../helpers/dashboard.js';

const resetToken = (raw: string) => {
  const m = /(https?:\/\/\S+)\/reset\?token=([A-Za-z0-9_-]+)/.exec(mailText(raw));
  if (!m) throw new Error(`no reset link in:\n${raw}`);
  return { base: m[1], token: m[2] };
};

t.test('change password: needs the current one, keeps this session, ends the others', async (t) => {
  const s = await sharedDashboard({ LOGIN_MAX_ATTEMPTS: '1000' });
  const { api } = s;
  const u = await signUp(s);
  const other = (await api('POST', '/login', { body: { email: u.email, password: u.password } })).json.token;
  const wrong = await api('POST', '/password', {
    token: u.session,
    body: { current_password: 'not the password', new_password: 'a brand new password' },
  });
  t.equal(wrong.status, 400);
  t.match(wrong.json.error, { code: 'wrong_password', param: 'current_password' });
  const short = await api('POST', '/password', {
    token: u.session,
    body: { current_password: u.password, new_password: 'short' },
  });
  t.match(short.json.error, { param: 'new_password', reason: 'too_short', params: { min: 8 } });
  t.equal(
    (await api('GET', '/balance', { token: other })).status,
    200,
    'refusals change nothing: the other session lives',
  );
  const ok = await api('POST', '/password', {
    token: u.session,
    body: { current_password: u.password, new_password: 'a brand new password' },
  });
  t.equal(ok.status, 204);
  t.equal((await api('GET', '/balance', { token: u.session })).status, 200, 'this session stays');
  t.equal((await api('GET', '/balance', { token: other })).status, 401, 'the other session is ended');
  t.equal(
    (await api('POST', '/login', { body: { email: u.email, password: u.password } })).status,
    401,
    'the old password no longer works',
  );
  t.equal(
    (await api('POST', '/login', { body: { email: u.email, password: 'a brand new password' } })).status,
    200,
    'the new one does',
  );
  t.equal(
    (await api('POST', '/password', { body: { current_password: 'x', new_password: 'yyyyyyyyy' } })).status,
    401,
    'needs a session',
  );
});

t.test('change password attempts are limited per account', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: '3' });
  const u = await signUp(s);
  const body = { current_password: 'guess', new_password: 'a brand new password' };
  for (let i = 0; i < 3; i++) t.equal((await s.api('POST', '/password', { token: u.session, body })).status, 400);
  const blocked = await s.api('POST', '/password', { token: u.session, body });
  t.equal(blocked.status, 429);
  t.ok(Number(blocked.headers['retry-after']) > 0, 'with retry-after');
});

t.test('sign out everywhere', async (t) => {
  const s = await sharedDashboard({ LOGIN_MAX_ATTEMPTS: '1000' });
  const u = await signUp(s);
  const second = (await s.api('POST', '/login', { body: { email: u.email, password: u.password } })).json.token;
  t.equal((await s.api('POST', '/logout-all', { token: second })).status, 204);
  t.equal((await s.api('GET', '/keys', { token: u.session })).status, 401, 'the first session is ended');
  t.equal((await s.api('GET', '/keys', { token: second })).status, 401, 'and the one that asked');
});

t.test('reset by a mailed link: same answer for unknown emails, single use, expiring, ends sessions', async (t) => {
  const s = await sharedDashboard({ LOGIN_MAX_ATTEMPTS: '1000' });
  const { api, gw } = s;
  const u = await signUp(s);
  const stranger = newEmail();
  const known = await api('POST', '/password-reset', { body: { email: u.email.toUpperCase() } });
  const unknown = await api('POST', '/password-reset', { body: { email: stranger } });
  t.equal(known.status, 202);
  t.same(unknown.json, known.json, 'the same answer for an unknown email');
  t.same(known.json, { status: 'reset_sent' });
  const mail = await s.sink.take(u.email);
  t.match(mailText(mail.raw), /Reset your airouter password/);
  const { base, token } = resetToken(mail.raw);
  t.equal(base, 'https://dash.example.test', 'the link is on PUBLIC_URL');
  await new Promise((r) => setTimeout(r, 300));
  t.notOk(
    s.sink.mails.some((m) => m.to.includes(stranger)),
    'nothing is mailed to an unknown email',
  );

  // A reset token is not a signup token, and the other way round.
  t.equal(
    (await api('POST', '/verify', { body: { token, password: 'whatever password' } })).json.error.code,
    'invalid_token',
    'a reset link does not verify',
  );

  const set = await api('POST', '/password-reset/confirm', { body: { token, password: 'the reset password' } });
  t.equal(set.status, 200);
  t.match(set.json.token, /^ars_/, 'opens a session');
  t.equal((await api('GET', '/balance', { token: u.session })).status, 401, 'sessions from before are ended');
  t.equal(
    (await api('POST', '/login', { body: { email: u.email, password: 'the reset password' } })).status,
    200,
    'the new password works',
  );
  const again = await api('POST', '/password-reset/confirm', { body: { token, password: 'yet another password' } });
  t.equal(again.json.error.code, 'token_used', 'single use');

  await api('POST', '/password-reset', { body: { email: u.email } });
  const late = resetToken((await s.sink.take(u.email)).raw).token;
  await gw.services.sql`UPDATE email_tokens SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`;
  t.equal(
    (await api('POST', '/password-reset/confirm', { body: { token: late, password: 'yet another password' } })).json
      .error.code,
    'token_expired',
    'expires',
  );
  const bogus = await api('POST', '/password-reset/confirm', {
    body: { token: 'A'.repeat(43), password: 'yet another password' },
  });
  t.equal(bogus.json.error.code, 'invalid_token');
});

t.test('without PUBLIC_URL, links use the local address the request came to', async (t) => {
  const s = await startDashboard(t, { PUBLIC_URL: '', LOGIN_MAX_ATTEMPTS: '1000' });
  const port = new URL(s.gw.url).port;
  const email = newEmail();
  const post = (host: string, body: unknown) =>
    request(`${s.gw.url}/api/dashboard/register`, {
      method: 'POST',
      headers: { host, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  t.equal((await post(`127.0.0.1:${port}`, { email })).statusCode, 202);
  t.ok(
    verifyLinkToken((await s.sink.take(email)).raw).link.startsWith(`http://127.0.0.1:${port}/verify?token=`),
    'reached as 127.0.0.1: the link says 127.0.0.1',
  );
  const other = newEmail();
  t.equal((await post('attacker.example:443', { email: other })).statusCode, 202);
  const link = verifyLinkToken((await s.sink.take(other)).raw).link;
  t.notOk(link.includes('attacker.example'), `a name from the Host header is not trusted (${link})`);
  t.ok(link.startsWith(`http://localhost:`), 'the configured default instead');
});

t.test('a hash records its cost: the default is 15, a lowered one applies to new passwords only', async (t) => {
  const { loadConfig } = await import('../../src/config.js');
  const { hashPassword, setPasswordHashCost, verifyPassword } = await import('../../src/accounts/passwords.js');
  const { TEST_PASSWORD_HASH_COST } = await import('../helpers/stores.js');
  t.equal(loadConfig({}).PASSWORD_HASH_COST, 15, 'what users get');
  t.teardown(() => setPasswordHashCost(TEST_PASSWORD_HASH_COST));
  setPasswordHashCost(15);
  const strong = await hashPassword('correct horse');
  t.match(strong, /^scrypt\$32768\$8\$1\$/);
  setPasswordHashCost(10);
  const light = await hashPassword('correct horse');
  t.match(light, /^scrypt\$1024\$8\$1\$/);
  setPasswordHashCost(15);
  t.ok(await verifyPassword('correct horse', light), 'a hash made at another cost still verifies');
  t.notOk(await verifyPassword('wrong horse', light));
  t.ok(await verifyPassword('correct horse', strong));

  // A gateway applies its configuration to the passwords it stores.
  const s = await startDashboard(t, { PASSWORD_HASH_COST: '11' });
  const u = await signUp(s);
  const [row] = await s.gw.stores.sql<
    { password_hash: string }[]
  >`SELECT password_hash FROM users WHERE id = ${u.userId}`;
  t.match(row.password_hash, /^scrypt\$2048\$8\$1\$/);
});
