// The whole way in: register → mail (real SMTP) → verify → login → key → a chat completion
// with that key → the request in the usage log and the totals, to the nano-dollar.

import t from 'tap';
import { request } from 'undici';
import { PRICES } from '../helpers/gateway.js';
import { eventually } from '../helpers/http.js';
import { mailText, newEmail, sharedDashboard, startDashboard, verifyLinkToken } from '../helpers/dashboard.js';
import { captureLog } from '../helpers/payments.js';

const nanoPerMillion = (usdPerMillion: number) => BigInt(Math.round(usdPerMillion * 1e9));
const nanoToUsd = (n: bigint) => `${n / 1_000_000_000n}.${(n % 1_000_000_000n).toString().padStart(9, '0')}`;

function expectedCost(
  usage: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number },
  p: typeof PRICES.pricing,
) {
  const cached = BigInt(usage.cached_tokens ?? 0);
  const input = BigInt(usage.prompt_tokens) - cached;
  const total =
    input * nanoPerMillion(p.input) +
    cached * nanoPerMillion(p.cache_read) +
    BigInt(usage.completion_tokens) * nanoPerMillion(p.output);
  return (total + 999_999n) / 1_000_000n;
}

t.test('signup, login, key, inference, usage', async (t) => {
  const s = await sharedDashboard();
  const { api, sink, gw } = s;
  const email = newEmail();
  const password = 'correct horse battery staple';

  const reg = await api('POST', '/register', { body: { email: `  ${email.toUpperCase()} ` } });
  t.equal(reg.status, 202);
  t.same(reg.json, { status: 'verification_sent' });

  const mail = await sink.take(email);
  t.equal(mail.from, 'no-reply@localhost', 'sent from MAIL_FROM');
  t.match(mailText(mail.raw), /Subject: Confirm your airouter account/);
  const { link, token } = verifyLinkToken(mail.raw);
  t.ok(link.startsWith('https://dash.example.test/verify?token='), 'link built on PUBLIC_URL');
  t.ok(Buffer.from(token, 'base64url').length >= 32, 'token carries at least 32 random bytes');
  const stored = await gw.services.sql<{ token_hash: string; ttl_h: number }[]>`
    SELECT token_hash, extract(epoch FROM expires_at - created_at) / 3600 AS ttl_h FROM email_tokens`;
  t.equal(stored.length, 1);
  t.not(stored[0].token_hash, token, 'only a hash is stored');
  t.match(stored[0].token_hash, /^[0-9a-f]{64}$/);
  t.equal(Math.round(Number(stored[0].ttl_h)), 24, 'expires in 24 h');

  // Not signed up yet: no password to log in with.
  const early = await api('POST', '/login', { body: { email, password } });
  t.equal(early.status, 401);

  const ver = await api('POST', '/verify', { body: { token, password } });
  t.equal(ver.status, 200);
  t.match(ver.json, { user_id: String, token: /^ars_/, expires_at: String });
  const [user] = await gw.services.sql<
    { email_verified_at: Date | null; password_hash: string }[]
  >`SELECT email_verified_at, password_hash FROM users WHERE id = ${ver.json.user_id}`;
  t.ok(user.email_verified_at, 'email verified');
  t.match(user.password_hash, /^scrypt\$/);

  const login = await api('POST', '/login', { body: { email: email.toUpperCase(), password } });
  t.equal(login.status, 200);
  t.equal(login.json.user_id, ver.json.user_id);
  const ttl = (Date.parse(login.json.expires_at) - Date.now()) / 1000;
  t.ok(Math.abs(ttl - gw.services.config.SESSION_TTL_S) < 60, 'session lasts SESSION_TTL_S');
  const session = login.json.token as string;
  t.not(session, ver.json.token, 'a new session per login');

  // New accounts start empty; give this one some credit as a deposit would.
  const { creditUser } = await import('../../src/accounts/users.js');
  await creditUser(gw.services.sql, gw.services.hot, login.json.user_id, 5_000_000_000n, {
    method: 'operator',
    amount: '5',
    currency: 'USD',
  });
  const bal = await api('GET', '/balance', { token: session });
  t.same(bal.json, {
    currency: 'USD',
    balance_usd: '5.000000000',
    reserved_usd: '0.000000000',
    available_usd: '5.000000000',
    is_admin: false,
  });

  const created = await api('POST', '/keys', { token: session, body: { name: 'my laptop' } });
  t.equal(created.status, 201);
  t.match(created.json, {
    id: String,
    name: 'my laptop',
    key: /^ar-[0-9A-Za-z]{40}$/,
    prefix: String,
    created_at: String,
  });
  t.ok(created.json.key.startsWith(created.json.prefix));

  const listed = await api('GET', '/keys', { token: session });
  t.equal(listed.status, 200);
  t.equal(listed.json.data.length, 1);
  t.same(Object.keys(listed.json.data[0]).sort(), [
    'created_at',
    'id',
    'last_used_at',
    'name',
    'prefix',
    'revoked_at',
    'rpm_limit',
    'spend_limit_period',
    'spend_limit_usd',
  ]);
  t.notOk(listed.text.includes(created.json.key), 'the secret is never listed');

  // One plain request and one with cached prompt tokens, so every price is exercised.
  const chats = [];
  for (const content of [
    'Hello there, how are you today?',
    'Again, with the cache please [[cached]] and some more words.',
  ]) {
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${created.json.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content }] }),
    });
    const body = (await res.body.json()) as any;
    t.equal(res.statusCode, 200);
    chats.push(body.usage);
  }
  t.ok(chats[1].cached_tokens > 0, 'second request read from cache');

  const usage = await eventually(async () => {
    const r = await api('GET', '/usage', { token: session });
    return r.json.data.length === 2 ? r : undefined;
  }, 5000);
  t.ok(usage, 'both requests reached the usage log');
  const rows = usage!.json.data;
  t.equal(usage!.json.next_cursor, null);
  let cost = 0n;
  let official = 0n;
  let prompt = 0;
  let completion = 0;
  let cached = 0;
  // Newest first.
  for (const [row, u] of [
    [rows[1], chats[0]],
    [rows[0], chats[1]],
  ] as const) {
    const c = expectedCost(u, PRICES.pricing);
    const o = expectedCost(u, PRICES.official_pricing);
    t.match(row, {
      id: /^\d+$/,
      model: 'oa-model',
      key_id: created.json.id,
      surface: 'chat',
      stream: false,
      status: 200,
      prompt_tokens: u.prompt_tokens,
      completion_tokens: u.completion_tokens,
      cached_tokens: u.cached_tokens ?? 0,
      cost_usd: nanoToUsd(c),
      official_cost_usd: nanoToUsd(o),
      latency_ms: Number,
    });
    t.ok('ttft_ms' in row);
    cost += c;
    official += o;
    prompt += u.prompt_tokens;
    completion += u.completion_tokens;
    cached += u.cached_tokens ?? 0;
  }

  for (const q of ['', '?range=24h', '?range=90d', `?from=${new Date(Date.now() - 3600_000).toISOString()}`]) {
    const stats = await api('GET', `/usage-stats${q}`, { token: session });
    t.equal(stats.status, 200, `usage-stats${q}`);
    t.match(stats.json, {
      requests: 2,
      prompt_tokens: prompt,
      completion_tokens: completion,
      cached_tokens: cached,
      total_tokens: prompt + completion,
      cost_usd: nanoToUsd(cost),
      official_cost_usd: nanoToUsd(official),
      saved_usd: nanoToUsd(official - cost),
    });
    t.same(stats.json.by_model, [
      {
        model: 'oa-model',
        requests: 2,
        prompt_tokens: prompt,
        completion_tokens: completion,
        cached_tokens: cached,
        total_tokens: prompt + completion,
        cost_usd: nanoToUsd(cost),
        official_cost_usd: nanoToUsd(official),
        saved_usd: nanoToUsd(official - cost),
      },
    ]);
    t.equal(stats.json.by_day.length, 1);
    t.equal(stats.json.by_day[0].day, new Date().toISOString().slice(0, 10));
    t.equal(stats.json.by_day[0].cost_usd, nanoToUsd(cost));
  }
  t.ok(official > cost, 'the discount shows as savings');

  const after = await api('GET', '/balance', { token: session });
  t.equal(after.json.balance_usd, nanoToUsd(5_000_000_000n - cost), 'the balance went down by exactly the cost');

  const keysAfter = await api('GET', '/keys', { token: session });
  t.ok(keysAfter.json.data[0].last_used_at, 'last_used_at is set once usage is recorded');

  const filtered = await api('GET', `/usage?key_id=${created.json.id}&model=oa-model&limit=1`, { token: session });
  t.equal(filtered.json.data.length, 1);
  t.equal(filtered.json.data[0].id, rows[0].id);
  const page2 = await api(
    'GET',
    `/usage?key_id=${created.json.id}&model=oa-model&limit=1&cursor=${filtered.json.next_cursor}`,
    { token: session },
  );
  t.same(
    page2.json.data.map((r: any) => r.id),
    [rows[1].id],
  );
  t.equal(page2.json.next_cursor, null);
  t.same((await api('GET', '/usage?model=an-model', { token: session })).json.data, []);

  const deposits = await api('GET', '/deposits', { token: session });
  t.equal(deposits.status, 200);
  t.match(deposits.json, {
    data: [
      {
        id: String,
        method: 'operator',
        status: 'paid',
        amount: '5',
        currency: 'USD',
        credit_usd: '5.000000000',
        created_at: String,
        paid_at: String,
      },
    ],
    next_cursor: null,
  });

  const catalog = await api('GET', '/catalog', { token: session });
  t.equal(catalog.status, 200);
  const oa = catalog.json.data.find((m: any) => m.id === 'oa-model');
  t.match(oa, {
    owned_by: 'fake',
    context_window: 100000,
    pricing: PRICES.pricing,
    official_pricing: PRICES.official_pricing,
    discount_pct: 20,
  });

  const out = await api('POST', '/logout', { token: session });
  t.equal(out.status, 204);
  t.equal(out.text, '');
  t.equal((await api('GET', '/keys', { token: session })).status, 401, 'the session is gone');
  t.equal((await api('GET', '/keys', { token: ver.json.token })).status, 200, 'other sessions live on');
});

t.test('register for an existing account changes nothing and tells the owner', async (t) => {
  const s = await sharedDashboard();
  const u = await s.gw.user('1');
  const [before] = await s.gw.services.sql<
    { password_hash: string }[]
  >`SELECT password_hash FROM users WHERE id = ${u.userId}`;
  const fresh = newEmail();
  const known = await s.api('POST', '/register', { body: { email: u.email } });
  const unknown = await s.api('POST', '/register', { body: { email: fresh } });
  t.equal(known.status, unknown.status, 'same status');
  t.same(known.json, unknown.json, 'same body');
  const mail = await s.sink.take(u.email);
  t.match(mailText(mail.raw), /already has one/);
  t.notMatch(mail.raw, /verify\?token=/, 'no link that could change the account');
  t.equal((await s.gw.services.sql`SELECT 1 FROM email_tokens WHERE user_id = ${u.userId}`).length, 0);
  const [after] = await s.gw.services.sql<
    { password_hash: string }[]
  >`SELECT password_hash FROM users WHERE id = ${u.userId}`;
  t.equal(after.password_hash, before.password_hash);
  t.equal(
    (await s.api('POST', '/login', { body: { email: u.email, password: 'correct horse battery staple' } })).status,
    200,
  );
  await s.sink.take(fresh);
});

t.test('register answers before any database work: known and unknown emails alike, both mailed', async (t) => {
  const logs = captureLog();
  const s = await startDashboard(t, {}, { log: logs.log });
  const u = await s.gw.user('1');
  const fresh = newEmail();
  const same = (r: { status: number; headers: Record<string, unknown>; text: string }) => ({
    status: r.status,
    text: r.text,
    headers: Object.fromEntries(Object.entries(r.headers).filter(([k]) => !['date', 'x-request-id'].includes(k))),
  });
  const known = await s.api('POST', '/register', { body: { email: u.email } });
  const unknown = await s.api('POST', '/register', { body: { email: fresh } });
  t.same(same(known), same(unknown), 'status, headers and body alike');
  t.equal(known.status, 202);
  t.match(mailText((await s.sink.take(u.email)).raw), /already has one/, 'the owner is told');
  t.ok(verifyLinkToken((await s.sink.take(fresh)).raw).token, 'the newcomer gets a link');

  // With Postgres failing, the answer is the same 202: nothing was looked up before it.
  const original = s.gw.services.sql;
  s.gw.services.sql = new Proxy(original, {
    apply() {
      const err: any = new Error('write CONNECTION_CLOSED');
      err.code = 'CONNECTION_CLOSED';
      return Promise.reject(err);
    },
  });
  t.teardown(() => {
    s.gw.services.sql = original;
  });
  const during = await s.api('POST', '/register', { body: { email: newEmail() } });
  t.same(same(during), same(unknown), 'answered alike while the database is away');
  const logged = await eventually(() => logs.lines.find((l) => l.msg === 'signup after the answer failed'), 3000);
  s.gw.services.sql = original;
  t.ok(logged, 'the failure after the answer is logged');
  t.equal(logged?.level, 50, 'as an error');
});

t.test('an operator-made account without a password can set one by signing up', async (t) => {
  const s = await sharedDashboard();
  const { createVerifiedUser } = await import('../../src/accounts/users.js');
  const email = newEmail();
  const u = await createVerifiedUser(s.gw.services.sql, email);
  t.equal((await s.api('POST', '/register', { body: { email } })).status, 202);
  const { token } = verifyLinkToken((await s.sink.take(email)).raw);
  const ver = await s.api('POST', '/verify', { body: { token, password: 'new password here' } });
  t.equal(ver.status, 200);
  t.equal(ver.json.user_id, u.id);
});

t.test('without SMTP_URL the link is logged', async (t) => {
  const { createMailer, verificationMail } = await import('../../src/dashboard/mail.js');
  const lines: any[] = [];
  const log = { info: (obj: unknown, msg: string) => lines.push({ obj, msg }), debug() {} } as any;
  const mailer = createMailer({ SMTP_URL: undefined, MAIL_FROM: 'x <x@y.z>' }, log);
  await mailer.send(verificationMail('a@b.test', 'http://localhost:8080/verify?token=abc'));
  await mailer.idle();
  t.equal(lines.length, 1);
  t.match(lines[0].obj, { to: 'a@b.test', link: 'http://localhost:8080/verify?token=abc' });
});
