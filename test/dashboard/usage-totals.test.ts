// /usage-stats reads whole days from usage_daily and partial days from usage_records: it must
// agree exactly with a plain aggregate over usage_records for any range. /usage and /deposits
// page with keyset cursors: every row once, in order, even when timestamps tie.

import t from 'tap';
import { creditUser } from '../../src/accounts/users.js';
import { splitRange } from '../../src/dashboard/usage.js';
import type { Sql } from '../../src/store/sql.js';
import { sharedDashboard, signUp } from '../helpers/dashboard.js';

const DAY = 86_400_000;
const MODELS = ['m-alpha', 'm-beta', 'm-gamma'];

/** `n` records spread over the last `days` days at odd offsets, through the same path the writer uses: multi-row INSERTs. */
async function insertUsage(sql: Sql, userId: string, n: number, days: number, seed = 1) {
  const rows = [];
  for (let i = 0; i < n; i++) {
    const x = (i * 7919 + seed * 104729) % 1_000_003;
    rows.push({
      user_id: userId,
      key_id: null,
      request_id: `r${seed}_${i}`,
      model: MODELS[x % MODELS.length],
      surface: x % 2 ? 'chat' : 'messages',
      stream: x % 3 === 0,
      status: 200,
      prompt_tokens: 10 + (x % 1000),
      completion_tokens: 1 + (x % 500),
      cached_tokens: x % 7,
      cache_write_tokens: 0,
      cost_nano: String(1 + x * 13),
      official_cost_nano: String(2 + x * 17),
      latency_ms: 100,
      ttft_ms: null,
      created_at: new Date(Date.now() - (x / 1_000_003) * days * DAY),
    });
  }
  for (let i = 0; i < rows.length; i += 500) await sql`INSERT INTO usage_records ${sql(rows.slice(i, i + 500))}`;
}

/** The reference: one plain aggregate over the raw rows. */
async function rawStats(sql: Sql, userId: string, from?: Date, to?: Date) {
  const rows = await sql<
    {
      model: string;
      day: string;
      requests: bigint;
      prompt: bigint;
      completion: bigint;
      cached: bigint;
      cost: string;
      official: string;
    }[]
  >`
    SELECT model, to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day, count(*) AS requests,
           sum(prompt_tokens) AS prompt, sum(completion_tokens) AS completion, sum(cached_tokens) AS cached,
           sum(cost_nano)::text AS cost, sum(official_cost_nano)::text AS official
    FROM usage_records
    WHERE user_id = ${userId} AND created_at >= ${from ?? new Date(0)} AND created_at < ${to ?? new Date(Date.now() + DAY)}
    GROUP BY 1, 2`;
  const total = { requests: 0, cost: 0n, prompt: 0 };
  const byDay = new Map<string, number>();
  const byModel = new Map<string, bigint>();
  for (const r of rows) {
    total.requests += Number(r.requests);
    total.cost += BigInt(r.cost);
    total.prompt += Number(r.prompt);
    byDay.set(r.day, (byDay.get(r.day) ?? 0) + Number(r.requests));
    byModel.set(r.model, (byModel.get(r.model) ?? 0n) + BigInt(r.official) - BigInt(r.cost));
  }
  return { total, byDay, byModel };
}

const usd = (n: bigint) => `${n / 1_000_000_000n}.${(n % 1_000_000_000n).toString().padStart(9, '0')}`;

t.test('splitRange', async (t) => {
  const d = (s: string) => new Date(s);
  t.same(splitRange({}), { days: { from: undefined, to: undefined }, raw: [] });
  t.same(splitRange({ from: d('2025-01-01T00:00:00Z') }), { days: { from: '2025-01-01', to: undefined }, raw: [] });
  t.same(splitRange({ from: d('2025-01-01T06:00:00Z') }), {
    days: { from: '2025-01-02', to: undefined },
    raw: [{ from: d('2025-01-01T06:00:00Z'), to: d('2025-01-02T00:00:00Z') }],
  });
  t.same(splitRange({ to: d('2025-01-03T06:00:00Z') }), {
    days: { from: undefined, to: '2025-01-03' },
    raw: [{ from: d('2025-01-03T00:00:00Z'), to: d('2025-01-03T06:00:00Z') }],
  });
  t.same(splitRange({ from: d('2025-01-01T06:00:00Z'), to: d('2025-01-01T18:00:00Z') }), {
    raw: [{ from: d('2025-01-01T06:00:00Z'), to: d('2025-01-01T18:00:00Z') }],
  });
  t.same(
    splitRange({ from: d('2025-01-01T06:00:00Z'), to: d('2025-01-02T18:00:00Z') }),
    {
      raw: [{ from: d('2025-01-01T06:00:00Z'), to: d('2025-01-02T18:00:00Z') }],
    },
    'no whole day in between: one raw piece',
  );
  t.same(splitRange({ from: d('2025-01-01T06:00:00Z'), to: d('2025-01-03T18:00:00Z') }), {
    days: { from: '2025-01-02', to: '2025-01-03' },
    raw: [
      { from: d('2025-01-01T06:00:00Z'), to: d('2025-01-02T00:00:00Z') },
      { from: d('2025-01-03T00:00:00Z'), to: d('2025-01-03T18:00:00Z') },
    ],
  });
  t.same(splitRange({ from: d('2025-01-01T00:00:00Z'), to: d('2025-01-01T00:00:00Z') }), { raw: [] }, 'empty range');
});

t.test('usage-stats equals the plain aggregate for any range', async (t) => {
  const s = await sharedDashboard();
  const { api, gw } = s;
  const sql = gw.services.sql;
  const u = await signUp(s);
  const other = await signUp(s);
  await insertUsage(sql, u.userId, 3000, 40, 1);
  await insertUsage(sql, u.userId, 700, 3, 2); // a second batch on top of the same days
  await insertUsage(sql, other.userId, 500, 40, 3);

  const [daily] = await sql<
    { n: bigint; cost: string }[]
  >`SELECT sum(requests) AS n, sum(cost_nano)::text AS cost FROM usage_daily WHERE user_id = ${u.userId}`;
  const [raw] = await sql<
    { n: bigint; cost: string }[]
  >`SELECT count(*) AS n, sum(cost_nano)::text AS cost FROM usage_records WHERE user_id = ${u.userId}`;
  t.same(daily, raw, 'the trigger kept usage_daily equal to the log');

  const now = Date.now();
  const midnight = Math.floor(now / DAY) * DAY;
  const iso = (ms: number) => new Date(ms).toISOString();
  const ranges: [string, Date?, Date?][] = [
    ['', undefined, undefined],
    ['range=24h', new Date(now - DAY)],
    ['range=7d', new Date(now - 7 * DAY)],
    ['range=30d', new Date(now - 30 * DAY)],
    ['range=90d', new Date(now - 90 * DAY)],
    [`from=${iso(midnight - 5 * DAY)}`, new Date(midnight - 5 * DAY)],
    [`to=${iso(midnight - 5 * DAY + 3_600_123)}`, undefined, new Date(midnight - 5 * DAY + 3_600_123)],
    [
      `from=${iso(midnight - 12 * DAY + 777)}&to=${iso(midnight - 2 * DAY - 999)}`,
      new Date(midnight - 12 * DAY + 777),
      new Date(midnight - 2 * DAY - 999),
    ],
    [
      `from=${iso(midnight - 3 * DAY + 1000)}&to=${iso(midnight - 3 * DAY + 50_000_000)}`,
      new Date(midnight - 3 * DAY + 1000),
      new Date(midnight - 3 * DAY + 50_000_000),
    ],
    [
      `from=${iso(midnight - 2 * DAY + 1000)}&to=${iso(midnight - DAY + 50_000_000)}`,
      new Date(midnight - 2 * DAY + 1000),
      new Date(midnight - DAY + 50_000_000),
    ],
    [
      `from=${iso(midnight - 20 * DAY)}&to=${iso(midnight - 10 * DAY)}`,
      new Date(midnight - 20 * DAY),
      new Date(midnight - 10 * DAY),
    ],
  ];
  for (const [q, from, to] of ranges) {
    const got = (await api('GET', `/usage-stats?${q}`, { token: u.session })).json;
    // range=… is resolved against the server's clock: compare over the bounds it applied.
    if (q.startsWith('range=')) t.ok(Math.abs(Date.parse(got.from) - from!.getTime()) < 5000, `${q}: from`);
    const want = await rawStats(sql, u.userId, got.from ? new Date(got.from) : from, got.to ? new Date(got.to) : to);
    t.equal(got.requests, want.total.requests, `${q || 'all'}: requests`);
    t.equal(got.cost_usd, usd(want.total.cost), `${q || 'all'}: cost`);
    t.equal(got.prompt_tokens, want.total.prompt, `${q || 'all'}: prompt tokens`);
    t.same(
      Object.fromEntries(got.by_day.map((d: any) => [d.day, d.requests])),
      Object.fromEntries(want.byDay),
      `${q || 'all'}: by day`,
    );
    t.same(
      Object.fromEntries(got.by_model.map((m: any) => [m.model, m.saved_usd])),
      Object.fromEntries([...want.byModel].map(([m, v]) => [m, usd(v)])),
      `${q || 'all'}: by model`,
    );
    t.same(
      got.by_day.map((d: any) => d.day),
      [...got.by_day.map((d: any) => d.day)].sort(),
      'days in order',
    );
  }
});

t.test('keyset pagination visits every row once, ties included', async (t) => {
  const s = await sharedDashboard();
  const { api, gw } = s;
  const sql = gw.services.sql;
  const u = await signUp(s);
  // 60 rows sharing one microsecond, 60 more spread out.
  const at = new Date(Date.now() - 3_600_000);
  const tied = Array.from({ length: 60 }, (_, i) => ({
    user_id: u.userId,
    request_id: `tie${i}`,
    model: i % 2 ? 'a' : 'b',
    surface: 'chat',
    stream: false,
    status: 200,
    created_at: at,
  }));
  await sql`INSERT INTO usage_records ${sql(tied)}`;
  await insertUsage(sql, u.userId, 60, 2, 9);
  const all = await sql<
    { id: bigint }[]
  >`SELECT id FROM usage_records WHERE user_id = ${u.userId} ORDER BY created_at DESC, id DESC`;

  for (const [q, expect] of [['', all.map((r) => r.id.toString())]] as const) {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: any = (await api('GET', `/usage?limit=7${q}${cursor ? `&cursor=${cursor}` : ''}`, { token: u.session }))
        .json;
      seen.push(...r.data.map((d: any) => d.id));
      cursor = r.next_cursor;
      pages++;
    } while (cursor && pages < 100);
    t.same(seen, expect, 'every row once, newest first');
    t.equal(pages, Math.ceil(expect.length / 7));
  }

  // With a filter, the cursor keeps to it.
  const bOnly = await sql<
    { id: bigint }[]
  >`SELECT id FROM usage_records WHERE user_id = ${u.userId} AND model = 'b' ORDER BY created_at DESC, id DESC`;
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const r: any = (
      await api('GET', `/usage?model=b&limit=4${cursor ? `&cursor=${cursor}` : ''}`, { token: u.session })
    ).json;
    seen.push(...r.data.map((d: any) => d.id));
    cursor = r.next_cursor;
  } while (cursor);
  t.same(
    seen,
    bOnly.map((r) => r.id.toString()),
  );

  // Deposits, with ties too.
  for (let i = 0; i < 5; i++)
    await creditUser(sql, gw.services.hot, u.userId, BigInt(i + 1) * 1_000_000n, {
      method: 'operator',
      amount: String(i + 1),
      currency: 'USD',
    });
  await sql`UPDATE deposits SET created_at = ${at} WHERE user_id = ${u.userId}`;
  await creditUser(sql, gw.services.hot, u.userId, 9_000_000n, { method: 'operator', amount: '9', currency: 'USD' });
  const deposits: string[] = [];
  cursor = null;
  do {
    const r: any = (await api('GET', `/deposits?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: u.session }))
      .json;
    deposits.push(...r.data.map((d: any) => d.amount));
    cursor = r.next_cursor;
  } while (cursor);
  t.equal(deposits.length, 6);
  t.equal(deposits[0], '9', 'newest first');
  t.same([...deposits].sort(), ['1', '2', '3', '4', '5', '9']);
  const inRange: any = (
    await api(
      'GET',
      `/deposits?from=${new Date(at.getTime() - 1000).toISOString()}&to=${new Date(at.getTime() + 1000).toISOString()}`,
      { token: u.session },
    )
  ).json;
  t.equal(inRange.data.length, 5, 'range applies to deposits');
});
