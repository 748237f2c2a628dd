// Verification links and sessions: single use, expiry, wrong passwords, logout.

import t from 'tap';
import { hashSecret } from '../../src/accounts/keys.js';
import { newEmail, sharedDashboard, signUp, startDashboard, verifyLinkToken } from '../helpers/dashboard.js';

t.test('verification tokens', async (t) => {
  const s = await sharedDashboard();
  const { api, sink, gw } = s;

  t.test('reused', async (t) => {
    const email = newEmail();
    await api('POST', '/register', { body: { email } });
    const { token } = verifyLinkToken((await sink.take(email)).raw);
    t.equal((await api('POST', '/verify', { body: { token, password: 'first password' } })).status, 200);
    const again = await api('POST', '/verify', { body: { token, password: 'second password' } });
    t.equal(again.status, 400);
    t.equal(again.json.error.code, 'token_used');
    t.equal(
      (await api('POST', '/login', { body: { email, password: 'second password' } })).status,
      401,
      'the password did not change',
    );
    t.equal((await api('POST', '/login', { body: { email, password: 'first password' } })).status, 200);
  });

  t.test('an older link dies when a newer one is used', async (t) => {
    const email = newEmail();
    await api('POST', '/register', { body: { email } });
    const first = verifyLinkToken((await sink.take(email)).raw).token;
    await api('POST', '/register', { body: { email } });
    const second = verifyLinkToken((await sink.take(email)).raw).token;
    t.not(first, second);
    t.equal((await api('POST', '/verify', { body: { token: second, password: 'chosen password' } })).status, 200);
    const old = await api('POST', '/verify', { body: { token: first, password: 'hijack password' } });
    t.equal(old.status, 400);
    t.equal(old.json.error.code, 'token_used');
  });

  t.test('parallel use of one token: exactly one wins', async (t) => {
    const email = newEmail();
    await api('POST', '/register', { body: { email } });
    const { token } = verifyLinkToken((await sink.take(email)).raw);
    const results = await Promise.all(
      [1, 2, 3, 4].map((i) => api('POST', '/verify', { body: { token, password: `password number ${i}` } })),
    );
    t.same(results.map((r) => r.status).sort(), [200, 400, 400, 400]);
  });

  t.test('expired', async (t) => {
    const email = newEmail();
    await api('POST', '/register', { body: { email } });
    const { token } = verifyLinkToken((await sink.take(email)).raw);
    await gw.services
      .sql`UPDATE email_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = ${hashSecret(token)}`;
    const r = await api('POST', '/verify', { body: { token, password: 'some password' } });
    t.equal(r.status, 400);
    t.equal(r.json.error.code, 'token_expired');
  });

  t.test('unknown', async (t) => {
    const r = await api('POST', '/verify', { body: { token: 'A'.repeat(43), password: 'some password' } });
    t.equal(r.status, 400);
    t.equal(r.json.error.code, 'invalid_token');
  });
});

t.test('login and sessions', async (t) => {
  const s = await sharedDashboard();
  const { api, gw } = s;
  const u = await signUp(s, 'the right password');

  const wrong = await api('POST', '/login', { body: { email: u.email, password: 'the wrong password' } });
  t.equal(wrong.status, 401);
  t.equal(wrong.json.error.code, 'invalid_credentials');
  const nobody = await api('POST', '/login', { body: { email: newEmail(), password: 'the right password' } });
  t.equal(nobody.status, 401);
  t.same(nobody.json, wrong.json, 'an unknown email reads exactly like a wrong password');
  const short = await api('POST', '/login', { body: { email: u.email, password: 'x' } });
  t.equal(short.status, 401, 'a short guess is just wrong');

  const ok = await api('POST', '/login', { body: { email: u.email, password: 'the right password' } });
  t.equal(ok.status, 200);
  const session = ok.json.token as string;
  t.equal((await api('GET', '/balance', { token: session })).status, 200);
  const [row] = await gw.services.sql<
    { n: bigint }[]
  >`SELECT count(*) AS n FROM sessions WHERE token_hash = ${hashSecret(session)}`;
  t.equal(row.n, 1n, 'stored hashed');

  await gw.services
    .sql`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE token_hash = ${hashSecret(session)}`;
  const expired = await api('GET', '/balance', { token: session });
  t.equal(expired.status, 401);
  t.equal(expired.json.error.code, 'invalid_session');

  const again = (await api('POST', '/login', { body: { email: u.email, password: 'the right password' } })).json
    .token as string;
  t.equal(
    (await gw.services.sql`SELECT 1 FROM sessions WHERE token_hash = ${hashSecret(session)}`).length,
    0,
    'expired sessions are swept at the next login',
  );
  t.equal((await api('POST', '/logout', { token: again })).status, 204);
  const out = await api('GET', '/keys', { token: again });
  t.equal(out.status, 401);
  t.equal(out.json.error.code, 'invalid_session');
  t.equal((await api('POST', '/logout', { token: again })).status, 401, 'logging out twice');

  for (const header of ['Bearer', 'Basic abc', 'Bearer ' + 'x'.repeat(5000), `Bearer ${u.session}x`]) {
    const r = await api('GET', '/keys', { headers: { authorization: header } });
    t.equal(r.status, 401, `authorization: ${header.slice(0, 20)}`);
  }
});

t.test('logins for unknown and known emails take about as long', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: '1000' });
  const u = await signUp(s);
  const time = async (email: string) => {
    const start = performance.now();
    const r = await s.api('POST', '/login', { body: { email, password: 'not the password' } });
    t.equal(r.status, 401);
    return performance.now() - start;
  };
  await time(newEmail());
  const known: number[] = [];
  const unknown: number[] = [];
  for (let i = 0; i < 5; i++) {
    known.push(await time(u.email));
    unknown.push(await time(newEmail()));
  }
  const med = (xs: number[]) => xs.sort((a, b) => a - b)[2];
  t.ok(
    med(unknown) > med(known) * 0.5,
    `unknown ${med(unknown).toFixed(1)} ms vs known ${med(known).toFixed(1)} ms: the KDF runs either way`,
  );
});
