// The playground: a prompt through the real inference path (the fake upstream behind it) on the
// caller's balance, with a key nobody sees (one per user, kept), streamed back; the request lands
// in the usage log with its cost, under the request id the answer named; the key's rate limit
// holds across requests, and its refusals fold as any key's do.

import t from 'tap';
import { request } from 'undici';
import { creditUser } from '../../src/accounts/users.js';
import { usdToNano } from '../../src/billing/money.js';
import { PLAYGROUND_LIMITS } from '../../src/dashboard/playground.js';
import { signUp, startDashboard } from '../helpers/dashboard.js';

/** REFUSALS_LOGGED_PER_MINUTE's default: a key's refusals of one minute past it fold into one row. */
const PER_MINUTE_LOGGED = 30;

t.test('a playground prompt streams, is billed and logged, with the one key the user has for it', async (t) => {
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

  await creditUser(gw.services.sql, gw.services.hot, u.userId, 1_000_000_000n, {
    method: 'operator',
    amount: '1',
    currency: 'USD',
  });
  const before = usdToNano((await api('GET', '/balance', { token })).json.balance_usd);
  const res = await play({ model: 'oa-model', prompt: 'Hello there', max_tokens: 20 });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/event-stream/);
  const requestId = res.headers['x-request-id'] as string;
  t.match(requestId, /^[A-Za-z0-9._:-]+$/, 'names its request');
  const text = await res.body.text();
  const events = text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));
  t.equal(events.at(-1), '[DONE]', 'a whole stream');
  const content = events
    .slice(0, -1)
    .map((e) => JSON.parse(e))
    .map((e) => e.choices?.[0]?.delta?.content ?? '')
    .join('');
  t.ok(content.length > 0, `the model's words arrive (${JSON.stringify(content.slice(0, 40))})`);
  t.ok(
    events.some((e) => e !== '[DONE]' && JSON.parse(e).usage),
    'with usage',
  );

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
  const [k] = await gw.services.sql<
    { revoked: boolean; ephemeral: boolean }[]
  >`SELECT revoked_at IS NOT NULL AS revoked, ephemeral FROM api_keys WHERE id = ${record.key_id}`;
  t.same(k, { revoked: false, ephemeral: true }, 'its key is ephemeral, and kept');

  const missing = await play({ model: 'no-such-model', prompt: 'Hello' });
  t.equal(missing.statusCode, 404);
  t.equal(((await missing.body.json()) as any).error.code, 'not_found');
  const empty = await play({ model: 'oa-model', prompt: '' });
  t.match(((await empty.body.json()) as any).error, { code: 'invalid_request', param: 'prompt', reason: 'required' });
  const anon = await request(`${gw.url}/api/dashboard/playground`, { method: 'POST', body: '{}' });
  t.equal(anon.statusCode, 401);
  await anon.body.text();
  const rows = await gw.services.sql<{ id: string }[]>`SELECT id FROM api_keys WHERE user_id = ${u.userId}`;
  t.same(
    rows.map((r) => r.id),
    [record.key_id],
    'one key row for every playground request the user made',
  );

  // Revoked with the user's keys (an admin's doing): the next request makes another.
  await gw.services.keys.revoke(u.userId, record.key_id);
  const again = await play({ model: 'oa-model', prompt: 'Hello again', max_tokens: 5 });
  t.equal(again.statusCode, 200, 'served with a new key');
  await again.body.text();
  const live = await gw.services.sql<
    { id: string }[]
  >`SELECT id FROM api_keys WHERE user_id = ${u.userId} AND revoked_at IS NULL`;
  t.equal(live.length, 1);
  t.not(live[0]!.id, record.key_id);
});

t.test(
  'the playground limit holds however many requests come at once, and a broke account folds its refusals',
  async (t) => {
    const s = await startDashboard(t);
    const { gw } = s;
    const u = await signUp(s);
    const play = () =>
      request(`${gw.url}/api/dashboard/playground`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.session}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'oa-model', prompt: 'Hi', max_tokens: 5 }),
      }).then(async (r) => {
        await r.body.dump();
        return r.statusCode;
      });
    // $0: 80 at once, all refused for the balance, and what they leave behind is one key and a
    // folded refusal, not a row each. They may straddle a minute, whose each logs its first
    // PER_MINUTE_LOGGED and one folded row: unfolded, 80 rows would pass that bound.
    const broke = await Promise.all(Array.from({ length: 80 }, play));
    t.ok(
      broke.every((st) => st === 402 || st === 429),
      `refused (${[...new Set(broke)].join(', ')})`,
    );
    t.equal((await gw.services.sql`SELECT 1 FROM api_keys WHERE user_id = ${u.userId}`).length, 1, 'one key');
    await gw.services.refusals.flush();
    const [{ n }] = await gw.services.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM refused_requests WHERE user_id = ${u.userId}`;
    t.ok(n <= 2 * (PER_MINUTE_LOGGED + 1), `its refusals folded: ${n} rows for 80 refusals`);

    await creditUser(gw.services.sql, gw.services.hot, u.userId, 1_000_000_000n, {
      method: 'operator',
      amount: '1',
      currency: 'USD',
    });
    const funded = await Promise.all(Array.from({ length: 40 }, play));
    const served = funded.filter((st) => st === 200).length;
    t.ok(served <= PLAYGROUND_LIMITS.rpm, `at most ${PLAYGROUND_LIMITS.rpm} a minute served (${served})`);
    t.ok(funded.filter((st) => st === 429).length >= 40 - PLAYGROUND_LIMITS.rpm, 'the rest refused with 429');
  },
);
