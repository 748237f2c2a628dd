// The admin request log (/api/admin/requests, /requests/export): every user's requests,
// answered and refused, with the route that answered; each filter narrows to exactly the rows the
// tables hold; cursor paging loses and repeats nothing; the CSV is the same rows.

import t from 'tap';
import * as v from 'valibot';
import { setAdmin } from '../../src/admin/accounts.js';
import { AdminRequestList } from '../../src/admin/shapes.js';
import { waitFor } from '../helpers/child.js';
import { dashboardClient, signUp, startDashboard } from '../helpers/dashboard.js';
import { startTestGateway } from '../helpers/gateway.js';
import { answerErrors } from '../helpers/openapi.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { parseCsv } from '../helpers/csv.js';

interface DbRow {
  id: string;
  request_id: string;
  user_id: string;
  model: string;
  route: string | null;
  status: number;
  key_id: string | null;
  at: Date;
}
interface Row {
  id: string;
  request_id: string;
  user_id: string;
  model: string;
  route: string | null;
  status: number;
  key_id: string | null;
  created_at: string;
  cost_usd: string;
  error_code: string | null;
  email: string | null;
  key_prefix: string | null;
}

const chat = (url: string, key: string, model: string, content = 'hello there', stream = false) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content }] }),
  }).then(async (r) => {
    await r.arrayBuffer();
    return r.status;
  });

t.test('the request log across users', async (t) => {
  const s = await startDashboard(t);
  const sql = s.gw.services.sql;
  const admin = await signUp(s);
  await setAdmin(sql, { id: null, label: 'test setup' }, admin.userId, true);
  const api = dashboardClient(s.gw, t);
  const get = (path: string, token = admin.session) => api('GET', `/api/admin${path}`, { token });

  const a = await s.gw.user('10');
  const b = await s.gw.user('10');
  const poor = await s.gw.user('0');
  for (let i = 0; i < 3; i++) t.equal(await chat(s.gw.url, a.key, 'oa-model'), 200);
  t.equal(await chat(s.gw.url, a.key, 'fallback-model'), 200, 'the dead first route fails over to the second');
  t.equal(await chat(s.gw.url, b.key, 'an-model'), 200);
  t.equal(await chat(s.gw.url, b.key, 'an-model', 'hi', true), 200);
  t.equal(await chat(s.gw.url, b.key, 'oa-model', 'boom [[error:500]]'), 502, 'an upstream error');
  t.equal(await chat(s.gw.url, poor.key, 'oa-model'), 402, 'a refusal: no balance');

  // Records come through the outbox, refusals through their own batching: wait for both.
  const db = (await waitFor(
    async () => {
      const rows = await sql<DbRow[]>`
      SELECT id::text, request_id, user_id, model, route, status, key_id, created_at AS at FROM usage_records
      UNION ALL SELECT id::text, request_id, user_id, model, NULL, status, key_id, created_at FROM refused_requests
      ORDER BY at DESC, id DESC`;
      return rows.length >= 8 ? [...rows] : undefined;
    },
    10_000,
    50,
  )) as DbRow[];
  t.equal(db.length, 8, 'six answered, one upstream failure and one refusal');
  const ids = (rows: { request_id: string }[]) => rows.map((r) => r.request_id);

  const all = await get('/requests?limit=200');
  t.equal(all.status, 200, all.text);
  t.ok(v.safeParse(AdminRequestList, all.json).success, 'the answer fits its documented shape');
  const doc = (await get('/openapi.json')).json;
  t.same(answerErrors(doc, '/requests', 'get', all), [], 'and the OpenAPI document');
  const rows = all.json.data as Row[];
  t.same(ids(rows), ids(db), 'every request of every user, newest first');
  t.equal(all.json.next_cursor, null, 'one page');

  // The route is the one that answered.
  const byModel = (m: string) => rows.filter((r) => r.model === m && r.status === 200);
  t.same(
    byModel('fallback-model').map((r) => r.route),
    ['fake-openai/upstream-oa'],
    'fallback-model: its second route answered, not the dead first',
  );
  t.same(
    byModel('oa-model').map((r) => r.route),
    Array(3).fill('fake-openai/upstream-oa'),
  );
  t.same(
    byModel('an-model').map((r) => r.route),
    Array(2).fill('fake-anthropic/upstream-an'),
  );
  const refusal = rows.find((r) => r.user_id === poor.userId)!;
  t.match(
    refusal,
    {
      status: 402,
      error_code: 'insufficient_balance',
      cost_usd: '0.000000000',
      route: null,
      email: poor.email,
      key_id: poor.keyId,
    },
    'a refusal at $0, without route',
  );
  t.ok(refusal.key_prefix && poor.key.startsWith(refusal.key_prefix), 'the key by its prefix');
  const paid = rows.find((r) => r.status === 200)!;
  t.match(paid.cost_usd, /^0\.\d{9}$/, 'money as the admin API writes it');
  t.ok(paid.cost_usd !== '0.000000000', 'an answered request cost something');
  t.ok(
    rows.every((r) => /T\d\d:\d\d:\d\d\.\d{3}Z$/.test(r.created_at)),
    'times to the millisecond, in UTC',
  );

  // Each filter: exactly the rows the tables hold for it.
  const expect = async (query: string, want: DbRow[], what: string) => {
    const r = await get(`/requests?limit=200&${query}`);
    t.equal(r.status, 200, `${query}: ${r.text}`);
    t.same(ids(r.json.data), ids(want), what);
    t.ok(
      want.length > 0 || query.includes('from=2999') || query.includes('to=2000'),
      `${what}: the test asks for something`,
    );
  };
  await expect(
    `user=${a.userId}`,
    db.filter((r) => r.user_id === a.userId),
    'by user id',
  );
  await expect(
    `user=${encodeURIComponent(b.email.toUpperCase())}`,
    db.filter((r) => r.user_id === b.userId),
    'by email, in any case',
  );
  await expect(
    `key=${a.keyId}`,
    db.filter((r) => r.key_id === a.keyId),
    'by key',
  );
  await expect(
    `key=${b.keyId}&user=${b.userId}`,
    db.filter((r) => r.key_id === b.keyId),
    'by key and its owner',
  );
  t.same((await get(`/requests?key=${b.keyId}&user=${a.userId}`)).json.data, [], 'a key of another user: nothing');
  t.same((await get('/requests?user=nobody@example.test')).json.data, [], 'an unknown address: nothing');
  await expect(
    'model=an-model',
    db.filter((r) => r.model === 'an-model'),
    'by model',
  );
  await expect(
    'route=fake-openai/upstream-oa',
    db.filter((r) => r.route === 'fake-openai/upstream-oa'),
    'by route: both models it served',
  );
  t.equal(db.filter((r) => r.route === 'fake-openai/upstream-oa').length, 4);
  await expect(
    `route=${encodeURIComponent('fake-anthropic/upstream-an')}&model=an-model`,
    db.filter((r) => r.route === 'fake-anthropic/upstream-an'),
    'route and model',
  );
  t.same((await get('/requests?route=dead/x')).json.data, [], 'a route that never answered: nothing');
  await expect(
    'status=402',
    db.filter((r) => r.status === 402),
    'by one status: the refusal',
  );
  await expect(
    'status=200',
    db.filter((r) => r.status === 200),
    'by one status: the answered',
  );
  await expect(
    'status=error',
    db.filter((r) => r.status < 200 || r.status > 299),
    'errors: every non-2xx, refusals included',
  );
  t.equal(db.filter((r) => r.status < 200 || r.status > 299).length, 2);
  await expect(
    'status=ok',
    db.filter((r) => r.status >= 200 && r.status <= 299),
    'ok: the 2xx',
  );
  await expect(
    `status=error&user=${b.userId}`,
    db.filter((r) => r.user_id === b.userId && r.status !== 200),
    'filters combine',
  );
  // Time: [from, to), to the instant given.
  const sorted = [...db].sort((x, y) => x.at.getTime() - y.at.getTime());
  const from = sorted[2]!.at;
  const to = sorted[6]!.at;
  // The database keeps microseconds: a row's own millisecond, given as `to`, still leaves it out.
  const inRange = db.filter((r) => r.at.getTime() >= from.getTime() && r.at.getTime() < to.getTime());
  await expect(`from=${from.toISOString()}&to=${to.toISOString()}`, inRange, 'by time');
  await expect('from=2999-01-01T00:00:00Z', [], 'nothing after a future instant');
  await expect('to=2000-01-01T00:00:00%2B07:00', [], 'nothing before a past instant, with an offset');

  // Paging: two at a time, nothing lost or repeated.
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await get(`/requests?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    t.equal(page.status, 200, page.text);
    t.ok(page.json.data.length <= 2);
    seen.push(...page.json.data.map((r: Row) => r.id));
    cursor = page.json.next_cursor;
    pages++;
  } while (cursor && pages < 20);
  t.same(
    seen,
    rows.map((r) => r.id),
    'the pages are the log, in order',
  );
  t.equal(pages, 4);
  const filteredPage = await get(`/requests?limit=1&status=error`);
  const second = await get(`/requests?limit=1&status=error&cursor=${filteredPage.json.next_cursor}`);
  t.same(
    [...filteredPage.json.data, ...second.json.data].map((r: Row) => r.status).sort(),
    [402, 502],
    'pages of a filter',
  );
  t.equal(second.json.next_cursor, null);

  // CSV: the same rows, with a header, the same filters.
  const csv = await get('/requests/export');
  t.equal(csv.status, 200);
  t.match(String(csv.headers['content-type']), /^text\/csv/);
  t.match(String(csv.headers['content-disposition']), /attachment; filename="requests-.*\.csv"/);
  const lines = parseCsv(csv.text);
  const header = lines[0]!;
  t.same(header.slice(0, 4), ['created_at', 'request_id', 'user_id', 'email'], 'a header line');
  const col = (name: string) => header.indexOf(name);
  t.same(
    lines.slice(1).map((l) => l[col('request_id')]),
    ids(rows),
    'the rows of the log, newest first',
  );
  t.same(
    lines.slice(1).map((l) => [l[col('route')], l[col('cost_usd')], l[col('status')], l[col('email')]]),
    rows.map((r) => [r.route ?? '', r.cost_usd, String(r.status), r.email]),
    'route, money, status, address as in the JSON',
  );
  const csvAn = parseCsv((await get('/requests/export?model=an-model')).text);
  t.equal(csvAn.length, 3, 'filtered: header and the two rows');
  t.same(parseCsv((await get('/requests/export?from=2999-01-01')).text), [header], 'nothing: the header alone');

  // Refused to anyone not an admin.
  const user = await signUp(s);
  for (const path of ['/requests', '/requests/export']) {
    const r = await get(path, user.session);
    t.equal(r.status, 403, `${path}: a user's session`);
    t.equal(r.json.error.code, 'forbidden');
    t.equal((await api('GET', `/api/admin${path}`)).status, 401, `${path}: no session`);
  }

  // Bad values: a 400 in the dashboard's envelope that names the field.
  const bad: [string, string, string][] = [
    ['user=not-a-user', 'user', 'invalid_request'],
    ['key=123', 'key', 'invalid_request'],
    ['status=teapot', 'status', 'invalid_request'],
    ['status=999', 'status', 'invalid_request'],
    ['route=nothing', 'route', 'invalid_request'],
    ['model=', 'model', 'invalid_request'],
    ['from=yesterday', 'from', 'invalid_range'],
    ['from=2025-02-30T00:00:00Z', 'from', 'invalid_range'],
    ['to=2025-01-01T25:00:00Z', 'to', 'invalid_range'],
    ['from=2025-02-01&to=2025-01-01', 'from', 'invalid_range'],
    ['limit=0', 'limit', 'invalid_request'],
    ['cursor=bm9wZQ', 'cursor', 'invalid_cursor'],
  ];
  for (const [q, param, code] of bad) {
    for (const path of q.startsWith('limit') || q.startsWith('cursor')
      ? ['/requests']
      : ['/requests', '/requests/export']) {
      const r = await get(`${path}?${q}`);
      t.equal(r.status, 400, `${path}?${q}`);
      t.match(r.json, { error: { code, param } }, `${path}?${q}: ${r.json?.error?.message}`);
    }
  }
  // Another list's cursor is not this one's.
  const otherCursor = (await get('/requests?limit=1')).json.next_cursor as string;
  const decoded = Buffer.from(otherCursor, 'base64url').toString();
  const asUsage = Buffer.from(decoded.replace(/^r1\|/, 'u1|')).toString('base64url');
  const wrong = await get(`/requests?cursor=${asUsage}`);
  t.equal(wrong.status, 400, 'a usage-log cursor is refused');
  t.equal(wrong.json.error.code, 'invalid_cursor');
  t.equal(
    (await get('/requests?limit=5000')).json.data.length,
    8,
    'a limit past 200 is held to it, as on the other admin lists',
  );
});

t.test('the in-process hot store carries the route to the record', async (t) => {
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const gw = await startTestGateway(t, { upstream: up.url, env: { REDIS_URL: '' } });
  t.equal(gw.services.hot.kind, 'memory', 'no Redis here');
  const u = await gw.user('10');
  t.equal(await chat(gw.url, u.key, 'fallback-model'), 200);
  const routes = await waitFor(
    async () => {
      const rows = await gw.services.sql<
        { route: string | null }[]
      >`SELECT route FROM usage_records WHERE user_id = ${u.userId}`;
      return rows.length ? rows.map((r) => r.route) : undefined;
    },
    10_000,
    50,
  );
  t.same(routes, ['fake-openai/upstream-oa']);
});
