// One account sees only its own keys and usage, whatever ids it sends; a revoked key stops
// working on the inference surface at once.

import t from 'tap';
import { request } from 'undici';
import { eventually } from '../helpers/http.js';
import { sharedDashboard, signUp } from '../helpers/dashboard.js';

async function chat(url: string, key: string) {
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.statusCode, json: (await res.body.json()) as any };
}

t.test('user B cannot see or touch user A', async (t) => {
  const s = await sharedDashboard();
  const { api, gw } = s;
  const a = await signUp(s);
  const b = await signUp(s);
  const { creditUser } = await import('../../src/accounts/users.js');
  await creditUser(gw.services.sql, gw.services.hot, a.userId, 1_000_000_000n, {
    method: 'operator',
    amount: '1',
    currency: 'USD',
  });

  const keyA = (await api('POST', '/keys', { token: a.session, body: { name: 'A' } })).json;
  t.equal((await chat(gw.url, keyA.key)).status, 200);
  await eventually(async () => (await api('GET', '/usage', { token: a.session })).json.data.length === 1, 5000);
  const usageA = (await api('GET', '/usage', { token: a.session })).json.data;
  t.equal(usageA.length, 1);

  // Listing shows only one's own.
  t.same((await api('GET', '/keys', { token: b.session })).json, { data: [] });
  t.same((await api('GET', '/usage', { token: b.session })).json, { data: [], next_cursor: null });
  t.same(
    (await api('GET', `/usage?key_id=${keyA.id}`, { token: b.session })).json,
    { data: [], next_cursor: null },
    "filtering by A's key id shows nothing",
  );
  const statsB = (await api('GET', '/usage-stats', { token: b.session })).json;
  t.match(statsB, { requests: 0, cost_usd: '0.000000000', by_model: [], by_day: [] });
  t.same((await api('GET', '/deposits', { token: b.session })).json, { data: [], next_cursor: null });
  t.equal((await api('GET', '/balance', { token: b.session })).json.balance_usd, '0.000000000');

  // A's usage cursor handed to B pages through B's rows only (here: none).
  const cursorA = (await api('GET', '/usage?limit=1', { token: a.session })).json;
  t.equal(cursorA.next_cursor, null);

  // Revoking: A's real id, a made-up id, a malformed one: all the same 404 to B.
  for (const id of [
    keyA.id,
    '00000000-0000-4000-8000-000000000000',
    'not-a-uuid',
    '1',
    "x' OR '1'='1",
    keyA.id.toUpperCase(),
  ]) {
    const r = await api('DELETE', `/keys/${encodeURIComponent(id)}`, { token: b.session });
    t.equal(r.status, 404, `DELETE /keys/${id}`);
    t.equal(r.json.error.code, 'not_found');
  }
  t.equal((await chat(gw.url, keyA.key)).status, 200, "A's key still works");
  t.equal((await api('GET', '/keys', { token: a.session })).json.data[0].revoked_at, null);

  // Without a session, nothing at all.
  for (const [m, p] of [
    ['GET', '/keys'],
    ['POST', '/keys'],
    ['DELETE', `/keys/${keyA.id}`],
    ['GET', '/usage'],
    ['GET', '/usage-stats'],
    ['GET', '/balance'],
    ['GET', '/deposits'],
    ['GET', '/catalog'],
    ['POST', '/logout'],
  ]) {
    const r = await api(m, p);
    t.equal(r.status, 401, `${m} ${p} without a session`);
    t.equal(r.json.error.code, 'unauthorized');
    const bad = await api(m, p, { token: 'ars_' + 'x'.repeat(43) });
    t.equal(bad.status, 401, `${m} ${p} with a made-up session`);
    t.equal(bad.json.error.code, 'invalid_session');
    const key = await api(m, p, { token: keyA.key });
    t.equal(key.status, 401, `${m} ${p} with a service key instead of a session`);
  }
});

t.test('a revoked key gets 401 on the inference surface', async (t) => {
  const s = await sharedDashboard();
  const { api, gw } = s;
  const a = await signUp(s);
  const { creditUser } = await import('../../src/accounts/users.js');
  await creditUser(gw.services.sql, gw.services.hot, a.userId, 1_000_000_000n, {
    method: 'operator',
    amount: '1',
    currency: 'USD',
  });
  const k1 = (await api('POST', '/keys', { token: a.session, body: {} })).json;
  const k2 = (await api('POST', '/keys', { token: a.session })).json;
  t.equal(k1.name, '');
  t.equal((await chat(gw.url, k1.key)).status, 200, 'works (and is now cached)');

  const del = await api('DELETE', `/keys/${k1.id}`, { token: a.session });
  t.equal(del.status, 200);
  t.equal(del.json.id, k1.id);
  t.ok(Date.parse(del.json.revoked_at) <= Date.now() + 1000);

  const after = await chat(gw.url, k1.key);
  t.equal(after.status, 401);
  t.equal(after.json.error.code, 'invalid_api_key');
  t.equal((await chat(gw.url, k2.key)).status, 200, 'the other key is untouched');

  const again = await api('DELETE', `/keys/${k1.id}`, { token: a.session });
  t.equal(again.status, 200, 'revoking twice is harmless');
  t.equal(again.json.revoked_at, del.json.revoked_at, 'and keeps the first time');

  const list = (await api('GET', '/keys', { token: a.session })).json.data;
  t.equal(list.find((k: any) => k.id === k1.id).revoked_at, del.json.revoked_at);
  t.equal(list.find((k: any) => k.id === k2.id).revoked_at, null);

  // A bound on live keys; revoked ones do not count.
  await gw.services.sql`
    INSERT INTO api_keys (user_id, name, key_hash, prefix)
    SELECT ${a.userId}, 'bulk', md5(random()::text || i), 'ar-bulk' FROM generate_series(1, 99) AS i`;
  const full = await api('POST', '/keys', { token: a.session });
  t.equal(full.status, 409);
  t.equal(full.json.error.code, 'too_many_keys');
  t.equal((await api('DELETE', `/keys/${k2.id}`, { token: a.session })).status, 200);
  t.equal((await api('POST', '/keys', { token: a.session })).status, 201, 'room again after a revocation');
});
