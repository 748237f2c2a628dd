// Per-key limits set from the dashboard (POST /keys, PATCH /keys/{id}) hold on the inference
// surfaces of every gateway process at once: two workers behind one port, each holding the
// key's identity in its own cache when the limits change.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { createVerifiedUser, creditUser } from '../../src/accounts/users.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { openStores } from '../../src/store/index.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { childEnv, startServe, waitFor } from '../helpers/child.js';
import { dashboardClient, isEnvelope, signUp, startDashboard } from '../helpers/dashboard.js';
import { testCatalogue } from '../helpers/gateway.js';
import { readResponse, sleep } from '../helpers/http.js';
import { REDIS_URL, testDatabase, testRedisPrefix, uniqueName } from '../helpers/stores.js';

t.test('limits are validated, stored and listed', async (t) => {
  const s = await startDashboard(t);
  const { api } = s;
  const u = await signUp(s);
  const token = u.session;

  const created = await api('POST', '/keys', {
    token,
    body: { name: 'capped', rpm_limit: 60, spend_limit_usd: '2.5', spend_limit_period: 'month' },
  });
  t.equal(created.status, 201);
  t.match(created.json, { name: 'capped', rpm_limit: 60, spend_limit_usd: '2.500000000', spend_limit_period: 'month' });
  const plain = await api('POST', '/keys', { token, body: { name: 'plain' } });
  t.match(plain.json, { rpm_limit: null, spend_limit_usd: null, spend_limit_period: null });
  const [row] = await s.gw.services.sql<{ rpm_limit: number; spend_limit_nano: bigint; spend_limit_period: string }[]>`
    SELECT rpm_limit, spend_limit_nano, spend_limit_period FROM api_keys WHERE id = ${created.json.id}`;
  t.same(row, { rpm_limit: 60, spend_limit_nano: 2_500_000_000n, spend_limit_period: 'month' }, 'stored in nano-USD');

  const listed = (await api('GET', '/keys', { token })).json.data;
  t.match(
    listed.find((k: any) => k.id === created.json.id),
    { rpm_limit: 60, spend_limit_usd: '2.500000000', spend_limit_period: 'month' },
  );

  const bad: unknown[] = [
    { rpm_limit: 0 },
    { rpm_limit: -1 },
    { rpm_limit: 1.5 },
    { rpm_limit: '10' },
    { rpm_limit: 2 ** 31 },
    { rpm_limit: true },
    { spend_limit_usd: 1 },
    { spend_limit_usd: 0, spend_limit_period: 'day' },
    { spend_limit_usd: '-1', spend_limit_period: 'day' },
    { spend_limit_usd: 'abc', spend_limit_period: 'day' },
    { spend_limit_usd: '0.0000000001', spend_limit_period: 'day' },
    { spend_limit_usd: 1e12, spend_limit_period: 'day' },
    { spend_limit_usd: '1', spend_limit_period: 'year' },
    { spend_limit_period: 'day' },
    { spend_limit_usd: null, spend_limit_period: 'day' },
    { spend_limit_usd: [], spend_limit_period: 'day' },
  ];
  for (const body of bad) {
    for (const [m, p] of [
      ['POST', '/keys'],
      ['PATCH', `/keys/${plain.json.id}`],
    ]) {
      const r = await api(m, p, { token, body });
      t.equal(r.status, 400, `${m} ${JSON.stringify(body)}: ${r.json?.error?.message}`);
      t.ok(isEnvelope(r));
    }
  }
  t.match(
    (await api('POST', '/keys', { token, body: { spend_limit_usd: 1 } })).json.error.message,
    /"spend_limit_period" is required/,
  );
  t.match(
    (await api('PATCH', `/keys/${plain.json.id}`, { token, body: { spend_limit_period: 'day' } })).json.error.message,
    /"spend_limit_period" is given only together/,
  );
  t.same(
    (await api('GET', '/keys', { token })).json.data.find((k: any) => k.id === plain.json.id).rpm_limit,
    null,
    'nothing changed',
  );

  // PATCH: absent stays, null removes; number or string amounts.
  let r = await api('PATCH', `/keys/${created.json.id}`, { token, body: { rpm_limit: null } });
  t.match(r.json, {
    id: created.json.id,
    name: 'capped',
    rpm_limit: null,
    spend_limit_usd: '2.500000000',
    spend_limit_period: 'month',
  });
  r = await api('PATCH', `/keys/${created.json.id}`, {
    token,
    body: { name: 'renamed', spend_limit_usd: 0.25, spend_limit_period: 'total' },
  });
  t.match(r.json, { name: 'renamed', rpm_limit: null, spend_limit_usd: '0.250000000', spend_limit_period: 'total' });
  r = await api('PATCH', `/keys/${created.json.id}`, { token, body: { spend_limit_usd: null } });
  t.match(r.json, { rpm_limit: null, spend_limit_usd: null, spend_limit_period: null });

  // Someone else's key, or no key at all: 404.
  const other = await signUp(s);
  t.equal(
    (await api('PATCH', `/keys/${created.json.id}`, { token: other.session, body: { rpm_limit: 1 } })).status,
    404,
  );
  t.equal((await api('PATCH', '/keys/not-a-uuid', { token, body: { rpm_limit: 1 } })).status, 404);
  t.equal((await api('PATCH', `/keys/${created.json.id}`, { body: { rpm_limit: 1 } })).status, 401);
});

/** One request on a connection of its own, so the kernel may hand it to either worker. */
async function inference(base: string, surface: 'chat' | 'messages', key: string) {
  const chat = surface === 'chat';
  const res = await request(`${base}${chat ? '/v1/chat/completions' : '/v1/messages'}`, {
    method: 'POST',
    reset: true,
    headers: chat
      ? { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
      : { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify(
      chat
        ? { model: 'oa-model', messages: [{ role: 'user', content: 'hi' }] }
        : { model: 'an-model', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    ),
  });
  return readResponse(res);
}

t.test("limits set by PATCH hold across two worker processes, in both surfaces' envelopes", async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const dir = mkdtempSync(path.join(tmpdir(), 'airouter-limits-'));
  const configPath = path.join(dir, 'gateway.config.json');
  writeFileSync(configPath, JSON.stringify(testCatalogue({ upstream: fake.url })));
  const databaseUrl = await testDatabase(t);
  const redisPrefix = testRedisPrefix(t);
  const stores = await openStores({
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    dataDir: '/nonexistent',
  });
  t.teardown(() => stores.close());
  const env = childEnv({
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    WORKERS: '2',
    GATEWAY_CONFIG: configPath,
    FAKE_OPENAI_KEY: process.env.FAKE_OPENAI_KEY,
    FAKE_ANTHROPIC_KEY: process.env.FAKE_ANTHROPIC_KEY,
    USAGE_FLUSH_MS: '20',
    USAGE_FLUSH_MAX_MS: '20',
  });
  const serve = await startServe(t, env, 60_000);
  t.match(serve.stdout(), /with 2 workers/);

  const email = `${uniqueName('limits')}@example.test`;
  const user = await createVerifiedUser(stores.sql, email, 'a long enough password');
  await creditUser(stores.sql, stores.hot, user.id, 10_000_000_000n, {
    method: 'operator',
    amount: '10',
    currency: 'USD',
  });
  const api = dashboardClient({ url: serve.url }, t);
  const token = (await api('POST', '/login', { body: { email, password: 'a long enough password' } })).json
    .token as string;
  const key = (await api('POST', '/keys', { token, body: { name: 'shared' } })).json;
  let served = 0;

  // Both workers look the key up (no limits) and cache it.
  for (let i = 0; i < 6; i++) {
    const r = await inference(serve.url, i % 2 ? 'chat' : 'messages', key.key);
    t.equal(r.status, 200, `warm-up ${i}`);
    served++;
  }

  // The rpm window is a calendar minute: keep the counted requests inside one.
  if (Date.now() % 60_000 > 40_000) await sleep(60_000 - (Date.now() % 60_000) + 200);
  const patched = await api('PATCH', `/keys/${key.id}`, { token, body: { rpm_limit: 3 } });
  t.equal(patched.status, 200);
  t.equal(patched.json.rpm_limit, 3);
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) {
    const surface = i % 2 ? 'messages' : 'chat';
    const r = await inference(serve.url, surface, key.key);
    statuses.push(r.status);
    if (r.status === 200) served++;
    if (r.status !== 429) continue;
    const retry = Number(r.headers['retry-after']);
    t.ok(retry >= 1 && retry <= 60, `${surface}: retry-after ${retry}`);
    if (surface === 'chat')
      t.match(
        r.json,
        { error: { type: 'rate_limit_error', code: 'key_rate_limit', message: /3 requests per minute/ } },
        'chat envelope',
      );
    else
      t.match(
        r.json,
        { type: 'error', error: { type: 'rate_limit_error', message: /3 requests per minute/ } },
        'messages envelope',
      );
  }
  t.same(statuses, [200, 200, 200, 429, 429, 429, 429, 429], 'three a minute, counted across both workers');

  // A spend cap below one request's hold: refused at once, everywhere; retry when the day ends.
  const capped = await api('PATCH', `/keys/${key.id}`, {
    token,
    body: { rpm_limit: null, spend_limit_usd: '0.000001', spend_limit_period: 'day' },
  });
  t.match(capped.json, { rpm_limit: null, spend_limit_usd: '0.000001000', spend_limit_period: 'day' });
  for (let i = 0; i < 4; i++) {
    const surface = i % 2 ? 'messages' : 'chat';
    const r = await inference(serve.url, surface, key.key);
    t.equal(r.status, 429, `${surface}: over the spend cap`);
    const retry = Number(r.headers['retry-after']);
    t.ok(retry >= 1 && retry <= 86_400, `retry-after ${retry} (the rest of the UTC day)`);
    t.match(
      r.json,
      surface === 'chat'
        ? { error: { type: 'rate_limit_error', code: 'key_spend_limit' } }
        : { type: 'error', error: { type: 'rate_limit_error', message: /spend limit/ } },
    );
  }

  // Limits removed: served again by every worker.
  t.equal((await api('PATCH', `/keys/${key.id}`, { token, body: { spend_limit_usd: null } })).status, 200);
  for (let i = 0; i < 4; i++) {
    const r = await inference(serve.url, i % 2 ? 'messages' : 'chat', key.key);
    t.equal(r.status, 200, 'no limit any more');
    served++;
  }

  await waitFor(
    async () => (await stores.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM usage_records`)[0].n === served,
    10_000,
  );
  const report = await reconcile(stores.sql, stores.hot);
  t.same(report.mismatches, [], 'Postgres reconciles');
  t.same(report.hotMismatches, [], 'Redis agrees with Postgres');
  t.equal((await serve.stop('SIGTERM')).code, 0);
});
