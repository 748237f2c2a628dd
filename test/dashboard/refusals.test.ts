// Inference requests refused after their key was identified appear in the user's usage log at
// $0 (sql/026, src/inference/refusal-log.ts): with their status, error code and the request id
// the client was answered with; capped per key and minute, the rest counted on one row; never
// touching a balance, the books (reconcile) or the totals; in the CSV; under the status filter.

import t from 'tap';
import { request } from 'undici';
import { creditUser } from '../../src/accounts/users.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { signUp, startDashboard } from '../helpers/dashboard.js';
import { sleep } from '../helpers/http.js';

const PER_MINUTE = 5;

async function chat(base: string, key: string, body: unknown, surface: 'chat' | 'messages' = 'chat') {
  const res = await request(`${base}${surface === 'chat' ? '/v1/chat/completions' : '/v1/messages'}`, {
    method: 'POST',
    headers:
      surface === 'chat'
        ? { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
        : { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  await res.body.text();
  return { status: res.statusCode, requestId: String(res.headers['x-request-id']) };
}

const hello = (model = 'oa-model') => ({ model, max_tokens: 20, messages: [{ role: 'user', content: 'Hello' }] });

t.test('refused requests in the usage log, at $0', async (t) => {
  const s = await startDashboard(t, { REFUSALS_LOGGED_PER_MINUTE: String(PER_MINUTE) });
  const { api, gw } = s;
  const { sql } = gw.services;
  const base = gw.url;
  // The cap is per minute: start well inside one, so that a burst does not straddle two.
  if (Date.now() % 60_000 > 45_000) await sleep(60_000 - (Date.now() % 60_000) + 50);

  const rich = await signUp(s);
  await creditUser(sql, gw.services.hot, rich.userId, 1_000_000_000n, {
    method: 'operator',
    amount: '1',
    currency: 'USD',
  });
  const key = (await api('POST', '/keys', { token: rich.session, body: { name: 'main' } })).json;
  const limited = (await api('POST', '/keys', { token: rich.session, body: { name: 'limited', rpm_limit: 1 } })).json;
  const poor = await signUp(s);
  const poorKey = (await api('POST', '/keys', { token: poor.session, body: { name: 'empty' } })).json;

  // One answered request each, then the refusals.
  t.equal((await chat(base, key.key, hello())).status, 200);
  t.equal((await chat(base, limited.key, hello())).status, 200);
  await gw.services.outbox.drained();
  const balanceBefore = await gw.services.ledger.balance(rich.userId);
  const statsBefore = (await api('GET', '/usage-stats?range=24h', { token: rich.session })).json;
  t.equal(statsBefore.requests, 2);

  const badJson = await chat(base, key.key, '{"model":');
  t.equal(badJson.status, 400);
  const noModel = await chat(base, key.key, hello('no-such-model'));
  t.equal(noModel.status, 404);
  const noModelMessages = await chat(base, key.key, hello('no-such-model'), 'messages');
  t.equal(noModelMessages.status, 404);
  const limitedOut = await chat(base, limited.key, hello());
  t.equal(limitedOut.status, 429);
  const broke = await chat(base, poorKey.key, hello());
  t.equal(broke.status, 402);
  const unknown = await chat(base, 'ar-' + 'x'.repeat(40), hello());
  t.equal(unknown.status, 401);
  await gw.services.refusals.flush();

  const log = (await api('GET', '/usage?range=24h', { token: rich.session })).json.data;
  const refused = log.filter((r: any) => r.error_code !== null);
  t.same(
    refused.map((r: any) => r.request_id).sort(),
    [badJson.requestId, noModel.requestId, noModelMessages.requestId, limitedOut.requestId].sort(),
    'each refusal, with the request id it was answered with',
  );
  const byId = new Map(refused.map((r: any) => [r.request_id, r]));
  t.match(byId.get(badJson.requestId), {
    status: 400,
    error_code: 'invalid_json',
    key_id: key.id,
    surface: 'chat',
    model: '',
    cost_usd: '0.000000000',
    official_cost_usd: '0.000000000',
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    requests: 1,
    ttft_ms: null,
  });
  t.match(byId.get(noModel.requestId), {
    status: 404,
    error_code: 'model_not_found',
    model: 'no-such-model',
    surface: 'chat',
    cost_usd: '0.000000000',
  });
  t.match(byId.get(noModelMessages.requestId), { status: 404, model: 'no-such-model', surface: 'messages' });
  t.match(byId.get(limitedOut.requestId), {
    status: 429,
    error_code: 'key_rate_limit',
    key_id: limited.id,
    model: 'oa-model',
    cost_usd: '0.000000000',
  });
  t.ok(
    refused.every((r: any) => Number.isInteger(r.latency_ms) && r.latency_ms >= 0),
    'latency',
  );
  t.same(
    log.filter((r: any) => r.error_code === null).map((r: any) => r.status),
    [200, 200],
    'and the answered ones, as before',
  );

  const poorLog = (await api('GET', '/usage', { token: poor.session })).json.data;
  t.match(
    poorLog,
    [
      {
        status: 402,
        error_code: 'insufficient_balance',
        request_id: broke.requestId,
        key_id: poorKey.id,
        cost_usd: '0.000000000',
      },
    ],
    'a 402 before the body: no model yet',
  );
  const [{ n: unknownRows }] = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM refused_requests WHERE request_id = ${unknown.requestId}`;
  t.equal(unknownRows, 0, 'an unknown key has no user: nothing logged');

  // The status filter, over both tables.
  const ids = async (q: string) =>
    (await api('GET', `/usage?${q}`, { token: rich.session })).json.data.map((r: any) => r.status);
  t.same(await ids('status=ok'), [200, 200], 'ok: answered only');
  t.same((await ids('status=refused')).sort(), [400, 404, 404, 429], 'refused: the refusal log');
  t.same((await ids('status=error')).sort(), [400, 404, 404, 429], 'error: refusals too');
  t.same(await ids('status=404'), [404, 404], 'one code');
  t.same(await ids(`status=refused&key_id=${limited.id}`), [429], 'by key');
  t.same(await ids('status=refused&model=no-such-model'), [404, 404], 'by model');

  // One keyset over both tables: small pages give every row once, newest first.
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: any = (await api('GET', `/usage?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: rich.session }))
      .json;
    seen.push(...page.data.map((r: any) => r.id));
    cursor = page.next_cursor;
  } while (cursor);
  t.same(
    seen,
    log.map((r: any) => r.id),
    'paged: the same rows in the same order',
  );
  t.equal(new Set(seen).size, 6);

  // The CSV has them, with their code.
  const csv = (await api('GET', '/usage.csv?status=refused', { token: rich.session })).text.trim().split('\r\n');
  t.equal(csv.length, 5, 'a header and the four refusals');
  t.match(csv[0], /,error_code,requests$/);
  t.ok(
    csv.some((l) => l.includes(limitedOut.requestId) && l.endsWith(',key_rate_limit,1') && l.includes(',0.000000000,')),
    'with code, count and $0',
  );

  // Money: nothing moved.
  await gw.services.outbox.drained();
  const balanceAfter = await gw.services.ledger.balance(rich.userId);
  t.equal(balanceAfter.balance, balanceBefore.balance, 'the balance is untouched');
  t.equal((await gw.services.ledger.balance(poor.userId)).balance, 0n);
  const statsAfter = (await api('GET', '/usage-stats?range=24h', { token: rich.session })).json;
  t.same(
    { ...statsAfter, from: null, to: null },
    { ...statsBefore, from: null, to: null },
    'the totals count answered requests only',
  );
  const report = await reconcile(sql, gw.services.hot);
  t.same(report.mismatches, [], 'reconcile is exact');

  // A flood: past the cap, counted on one row per key, minute and status.
  const flood = await Promise.all(Array.from({ length: 3 * PER_MINUTE }, () => chat(base, poorKey.key, hello())));
  t.ok(flood.every((r) => r.status === 402));
  await gw.services.refusals.flush();
  // A second process's refusals (a second log on the same database) count against the same cap.
  const { RefusalLog } = await import('../../src/inference/refusal-log.js');
  const other = new RefusalLog(sql, gw.services.log, PER_MINUTE);
  for (let i = 0; i < 3; i++)
    other.add({
      userId: poor.userId,
      keyId: poorKey.id,
      requestId: `other-${i}`,
      model: '',
      surface: 'chat',
      stream: false,
      status: 402,
      code: 'insufficient_balance',
      latencyMs: 1,
      at: Date.now(),
    });
  await other.flush();
  const rows = (await api('GET', '/usage?status=402', { token: poor.session })).json.data;
  const single = rows.filter((r: any) => r.requests === 1 && r.request_id !== '');
  const aggregate = rows.filter((r: any) => r.request_id === '');
  t.equal(single.length, PER_MINUTE, `${PER_MINUTE} logged one by one in the minute`);
  t.equal(aggregate.length, 1, 'one aggregate row');
  t.equal(aggregate[0].requests, 1 + 3 * PER_MINUTE + 3 - PER_MINUTE, 'counting the rest, from both processes');
  t.match(aggregate[0], {
    status: 402,
    error_code: 'insufficient_balance',
    cost_usd: '0.000000000',
    key_id: poorKey.id,
  });
  t.equal((await ids('status=refused')).length, 4, "another user's refusals are not in this log");
  t.same(await reconcile(sql, gw.services.hot).then((r) => r.mismatches), [], 'reconcile is still exact');
});

t.test('REFUSALS_LOGGED_PER_MINUTE=0 logs none', async (t) => {
  const s = await startDashboard(t, { REFUSALS_LOGGED_PER_MINUTE: '0' });
  const u = await signUp(s);
  const k = (await s.api('POST', '/keys', { token: u.session, body: {} })).json;
  t.equal((await chat(s.gw.url, k.key, hello())).status, 402);
  await s.gw.services.refusals.flush();
  t.same((await s.api('GET', '/usage', { token: u.session })).json.data, []);
});

t.test('on the embedded stores (PGlite) too', async (t) => {
  const { startFakeUpstream } = await import('../fake-upstream/server.js');
  const { startTestGateway } = await import('../helpers/gateway.js');
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const gw = await startTestGateway(t, { upstream: up.url, embedded: true });
  const u = await gw.user('0');
  const r = await chat(gw.url, u.key, hello());
  t.equal(r.status, 402);
  await gw.services.refusals.flush();
  const rows = await gw.services.sql<
    { request_id: string; status: number; error_code: string }[]
  >`SELECT request_id, status, error_code FROM refused_requests`;
  t.same(rows, [{ request_id: r.requestId, status: 402, error_code: 'insufficient_balance' }]);
});
