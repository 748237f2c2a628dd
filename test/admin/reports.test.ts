// /api/admin/health (per route, from the route selector's own counts) and /api/admin/revenue
// (income from the usage records, upstream cost from the catalogue's upstream prices).

import t from 'tap';
import { setAdmin } from '../../src/admin/accounts.js';
import { dashboardClient, signUp, startDashboard } from '../helpers/dashboard.js';
import { waitFor } from '../helpers/child.js';
import * as v from 'valibot';
import { Health, Revenue } from '../../src/admin/shapes.js';

t.test('health and revenue', async (t) => {
  const s = await startDashboard(t, { ROUTE_COOLDOWN_MS: '60000' });
  const sql = s.gw.services.sql;
  const admin = await signUp(s);
  await setAdmin(sql, { id: null, label: 'test setup' }, admin.userId, true);
  const api = dashboardClient(s.gw, t);
  const call = (method: string, path: string, body?: unknown, token = admin.session) =>
    api(method, `/api/admin${path}`, { token, body });
  const u = await s.gw.user('10');
  t.equal(
    (await call('GET', '/health', undefined, (await signUp(s)).session)).status,
    403,
    'a user cannot read health',
  );

  const priced = await call('POST', '/catalogue/models/oa-model', {
    routes: [{ provider: 'fake-openai', model: 'upstream-oa', upstream_pricing: { input: 0.5, output: 1 } }],
  });
  t.equal(priced.status, 200, priced.text);
  const chat = (model: string) =>
    fetch(`${s.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello there' }] }),
    }).then(async (r) => {
      await r.arrayBuffer();
      return r.status;
    });
  for (let i = 0; i < 3; i++) t.equal(await chat('oa-model'), 200);
  t.equal(await chat('fallback-model'), 200, 'the dead first route fails over');

  const health = await waitFor(
    async () => {
      const h = await call('GET', '/health');
      const dead = h.json.routes.find((r: { route: string }) => r.route === 'dead/x');
      return dead?.day.attempts > 0 ? h.json : undefined;
    },
    10_000,
    200,
  );
  t.ok(v.safeParse(Health, health).success, 'GET /health fits its documented shape');
  const oa = health.routes.find((r: { route: string }) => r.route === 'fake-openai/upstream-oa');
  t.match(
    oa.now,
    { attempts: 4, errors: 0, cooldowns: 0 },
    'every attempt on the working route, in the last five minutes',
  );
  t.ok(oa.now.avg_latency_ms >= 0 && oa.now.max_latency_ms >= oa.now.avg_latency_ms);
  const dead = health.routes.find((r: { route: string }) => r.route === 'dead/x');
  t.match(
    dead.day,
    { attempts: 1, errors: 1, error_rate: 1, cooldowns: 1 },
    'the failing route: an error and a cooldown',
  );
  t.ok(Date.parse(dead.cooling_until) > Date.now(), 'still cooling down now');
  t.equal(
    oa.hourly.reduce((n: number, h: { attempts: number }) => n + h.attempts, 0),
    4,
    'per hour too',
  );

  // Revenue: income is what the records charged; upstream cost from the catalogue's upstream prices.
  const records = await waitFor(
    async () => {
      const rows = await sql<
        { model: string; prompt_tokens: number; completion_tokens: number; cached_tokens: number; cost_nano: bigint }[]
      >`SELECT model, prompt_tokens, completion_tokens, cached_tokens, cost_nano FROM usage_records`;
      return rows.length === 4 ? rows : undefined;
    },
    10_000,
    50,
  );
  const rev = await call('GET', '/revenue?days=7');
  t.equal(rev.status, 200, rev.text);
  t.ok(v.safeParse(Revenue, rev.json).success, 'GET /revenue fits its documented shape');
  const oaRows = records!.filter((r) => r.model === 'oa-model');
  const income = oaRows.reduce((n, r) => n + r.cost_nano, 0n);
  const cost =
    oaRows.reduce(
      (n, r) =>
        n +
        BigInt(r.prompt_tokens - r.cached_tokens) * 500_000_000n +
        BigInt(r.cached_tokens) * 500_000_000n +
        BigInt(r.completion_tokens) * 1_000_000_000n,
      0n,
    ) / 1_000_000n;
  const usd = (n: bigint) => `${n / 1_000_000_000n}.${(n % 1_000_000_000n).toString().padStart(9, '0')}`;
  const model = rev.json.per_model.find((m: { model: string }) => m.model === 'oa-model');
  t.same(
    model,
    {
      model: 'oa-model',
      requests: 3,
      income_usd: usd(income),
      upstream_cost_usd: usd(cost),
      margin_usd: usd(income - cost),
    },
    'income, upstream cost and margin of a priced model',
  );
  t.match(
    rev.json.per_model.find((m: { model: string }) => m.model === 'fallback-model'),
    { requests: 1, upstream_cost_usd: null, margin_usd: null },
    'no upstream price: no margin, rather than a made-up one',
  );
  t.equal(rev.json.per_day.length, 1);
  t.equal(rev.json.per_day[0].upstream_cost_usd, null, 'a day with an unpriced model has no total cost');
  const today = new Date().toISOString().slice(0, 10);
  t.same(
    rev.json.deposits,
    [{ day: today, method: 'operator', count: 1, credited_usd: '10.000000000' }],
    'deposits per day and method',
  );
  // The per-day sums follow a deposit's life: one paid on another day and method, one paid and
  // then taken back (failed), one still pending; they match the deposits table summed directly.
  const other = await sql<{ id: string }[]>`
    INSERT INTO deposits (user_id, method, status, amount, currency, credit_nano, paid_at)
    VALUES (${u.userId}, 'qris', 'paid', 5, 'USD', 5000000000, now() - interval '2 days'),
           (${u.userId}, 'qris', 'paid', 7, 'USD', 7000000000, now()),
           (${u.userId}, 'qris', 'pending', 9, 'USD', 9000000000, NULL) RETURNING id`;
  await sql`UPDATE deposits SET status = 'failed' WHERE id = ${other[1]!.id}`;
  const direct = await sql<{ day: Date; method: string; n: number; credit_nano: bigint }[]>`
    SELECT (paid_at AT TIME ZONE 'UTC')::date AS day, method, count(*)::int AS n, sum(credit_nano)::bigint AS credit_nano
    FROM deposits WHERE status = 'paid' GROUP BY 1, 2 ORDER BY 1, 2`;
  const again = await call('GET', '/revenue?days=7');
  t.same(
    again.json.deposits,
    direct.map((d) => ({
      day: d.day.toISOString().slice(0, 10),
      method: d.method,
      count: d.n,
      credited_usd: usd(d.credit_nano),
    })),
    'the report is the deposits summed, after a payment taken back',
  );
  t.equal(again.json.deposits.length, 2, 'two days: the taken-back one left no row behind');
  t.equal((await call('GET', '/revenue?days=0')).status, 400);
});
