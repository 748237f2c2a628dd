// The playground: a prompt through the real inference path (the fake upstream behind it) on the
// caller's balance, with a key nobody sees, streamed back; the request lands in the usage log
// with its cost, under the request id the answer named.

import t from 'tap';
import { request } from 'undici';
import { creditUser } from '../../src/accounts/users.js';
import { usdToNano } from '../../src/billing/money.js';
import { signUp, startDashboard } from '../helpers/dashboard.js';

t.test('a playground prompt streams, is billed and logged, and its key is gone', async (t) => {
  const s = await startDashboard(t);
  const { api, gw } = s;
  const u = await signUp(s);
  const token = u.session;
  const play = (body: unknown, session = token) =>
    request(`${gw.url}/api/dashboard/playground`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  const broke = await play({ model: 'oa-model', prompt: 'Hello' });
  t.equal(broke.statusCode, 402, 'at $0: refused');
  t.equal(((await broke.body.json()) as any).error.code, 'insufficient_balance', 'in the dashboard envelope');

  await creditUser(gw.gw.sql, gw.gw.hot, u.userId, 1_000_000_000n, { method: 'operator', amount: '1', currency: 'USD' });
  const before = usdToNano((await api('GET', '/balance', { token })).json.balance_usd);
  const res = await play({ model: 'oa-model', prompt: 'Hello there', max_tokens: 20 });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/event-stream/);
  const requestId = res.headers['x-request-id'] as string;
  t.match(requestId, /^[A-Za-z0-9._:-]+$/, 'names its request');
  const text = await res.body.text();
  const events = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
  t.equal(events.at(-1), '[DONE]', 'a whole stream');
  const content = events.slice(0, -1).map((e) => JSON.parse(e)).map((e) => e.choices?.[0]?.delta?.content ?? '').join('');
  t.ok(content.length > 0, `the model's words arrive (${JSON.stringify(content.slice(0, 40))})`);
  t.ok(events.some((e) => e !== '[DONE]' && JSON.parse(e).usage), 'with usage');

  let record: any;
  for (let i = 0; i < 50 && !record; i++) {
    record = (await api('GET', '/usage?range=24h', { token })).json.data.find((r: any) => r.request_id === requestId);
    if (!record) await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(record, 'the request is in the usage log under its id');
  t.ok(usdToNano(record.cost_usd) > 0n, `with its cost (${record.cost_usd})`);
  const after = usdToNano((await api('GET', '/balance', { token })).json.balance_usd);
  t.equal(before - after, usdToNano(record.cost_usd), 'charged exactly that to the balance');

  const keys = (await api('GET', '/keys', { token })).json.data;
  t.same(keys, [], 'the playground key is not listed');
  const [k] = await gw.gw.sql<{ revoked: boolean; ephemeral: boolean }[]>`SELECT revoked_at IS NOT NULL AS revoked, ephemeral FROM api_keys WHERE id = ${record.key_id}`;
  t.same(k, { revoked: true, ephemeral: true }, 'its key was ephemeral and is revoked');

  const missing = await play({ model: 'no-such-model', prompt: 'Hello' });
  t.equal(missing.statusCode, 404);
  t.equal(((await missing.body.json()) as any).error.code, 'not_found');
  const empty = await play({ model: 'oa-model', prompt: '' });
  t.match(((await empty.body.json()) as any).error, { code: 'invalid_request', param: 'prompt', reason: 'required' });
  const anon = await request(`${gw.url}/api/dashboard/playground`, { method: 'POST', body: '{}' });
  t.equal(anon.statusCode, 401);
  await anon.body.text();
  t.equal((await gw.gw.sql`SELECT 1 FROM api_keys WHERE user_id = ${u.userId} AND revoked_at IS NULL`).length, 0, 'no key left live');
});
