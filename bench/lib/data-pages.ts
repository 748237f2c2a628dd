// bench:data's dashboard and admin calls on the filled database: the heaviest user's usage log
// under every filter the API offers, its totals and exports, and the admin's pages and request log,
// each timed over `runs` calls after two warm-ups, one call at a time.

import { keyIdOf, MODELS, type Fixture } from './data-fill.js';
import { row, type Row } from './data-report.js';

const DAY_MS = 86_400_000;
const ms = (since: number) => Math.round((performance.now() - since) * 1000) / 1000;

export async function timePages(o: {
  url: string;
  fixture: Fixture;
  runs: number;
  progress: (line: string) => void;
}): Promise<Row[]> {
  const { url, fixture, progress } = o;
  const opts = { runs: o.runs };
  const K = fixture.keysPerUser;
  const rows: Row[] = [];
  const login = async (email: string) => {
    const res = await fetch(`${url}/api/dashboard/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: fixture.password }),
    });
    if (res.status !== 200) throw new Error(`login ${email}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { token: string }).token;
  };
  const userToken = await login(fixture.heavyEmail);
  const adminToken = await login(fixture.adminEmail);
  const get = async (p: string, token: string) => {
    const res = await fetch(url + p, { headers: { authorization: `Bearer ${token}` } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${p}: ${res.status} ${text.slice(0, 300)}`);
    return text;
  };
  const many = (n: number, what: string) => `${n.toLocaleString('en')} ${what}${n === 1 ? '' : 's'}`;
  const answer = (text: string) => {
    if (!text.startsWith('{')) return many(text.split('\r\n').length - 2, 'CSV row');
    const body = JSON.parse(text) as { data?: unknown[]; requests?: number; per_day?: unknown[]; routes?: unknown[] };
    if (body.data) return many(body.data.length, 'row');
    if (body.per_day) return many(body.per_day.length, 'day');
    if (body.routes) return many(body.routes.length, 'route');
    return body.requests !== undefined ? many(body.requests, 'request') : `${text.length} B`;
  };
  const time = async (call: string, p: string, token: string, runs = opts.runs) => {
    const samples: number[] = [];
    let last = '';
    for (let i = 0; i < runs + 2; i++) {
      const start = performance.now();
      last = await get(p, token);
      if (i >= 2) samples.push(ms(start));
    }
    rows.push(row(call, samples, answer(last)));
  };
  // An export streams: what its reader waits for before the download begins is its first
  // chunk of rows, timed here beside the whole file.
  const timeExport = async (call: string, p: string, token: string, runs: number) => {
    const whole: number[] = [];
    const first: number[] = [];
    let text = '';
    for (let i = 0; i < runs + 2; i++) {
      const start = performance.now();
      const res = await fetch(url + p, { headers: { authorization: `Bearer ${token}` } });
      if (res.status !== 200) throw new Error(`GET ${p}: ${res.status} ${(await res.text()).slice(0, 300)}`);
      const chunks: Uint8Array[] = [];
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        if (chunks.length === 0 && i >= 2) first.push(ms(start));
        chunks.push(chunk);
      }
      if (i >= 2) whole.push(ms(start));
      text = Buffer.concat(chunks).toString('utf8');
    }
    rows.push(row(call, whole, answer(text)));
    rows.push(row(`${call}: its first rows`, first, 'streamed'));
  };

  const now = Date.now();
  const iso = (t: number) => new Date(t).toISOString();
  const mid = now - Math.floor(fixture.days / 2) * DAY_MS;
  const rareModel = MODELS.at(-1)!.id;
  // A cursor 10,000 rows back: a deep page must cost what the first does.
  let cursor: string | null = null;
  for (let i = 0; i < 20; i++) {
    const page = JSON.parse(
      await get(`/api/dashboard/usage?limit=500${cursor ? `&cursor=${cursor}` : ''}`, userToken),
    ) as { next_cursor: string | null };
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  const D = '/api/dashboard';
  await time('GET /usage', `${D}/usage`, userToken);
  if (cursor) await time('GET /usage, a page 10,000 rows back (cursor)', `${D}/usage?cursor=${cursor}`, userToken);
  await time('GET /usage?status=error', `${D}/usage?status=error`, userToken);
  await time('GET /usage?status=502', `${D}/usage?status=502`, userToken);
  await time(`GET /usage?model=${rareModel}`, `${D}/usage?model=${rareModel}`, userToken);
  await time('GET /usage?key_id=… (third key)', `${D}/usage?key_id=${keyIdOf(1, Math.min(2, K - 1), K)}`, userToken);
  await time(
    'GET /usage?from=…&to=… (one day, mid-span)',
    `${D}/usage?from=${iso(mid)}&to=${iso(mid + DAY_MS)}`,
    userToken,
  );
  await time('GET /usage-stats?range=30d', `${D}/usage-stats?range=30d`, userToken);
  await time('GET /usage-stats?from=… (365 days)', `${D}/usage-stats?from=${iso(now - 365 * DAY_MS)}`, userToken);
  await timeExport('GET /usage.csv?range=24h', `${D}/usage.csv?range=24h`, userToken, opts.runs);
  await timeExport(
    'GET /usage.csv (everything: at most 100,000 rows)',
    `${D}/usage.csv`,
    userToken,
    Math.min(opts.runs, 3),
  );
  await time('GET /balance', `${D}/balance`, userToken);
  await time('GET /keys', `${D}/keys`, userToken);
  await time('GET /deposits', `${D}/deposits`, userToken);
  await time('GET /api/public/stats', '/api/public/stats', userToken);
  progress('dashboard timed');

  const A = '/api/admin';
  const needle = `u${Math.max(2, Math.floor(fixture.users / 7))}`;
  await time('GET /admin/users', `${A}/users`, adminToken);
  await time(`GET /admin/users?q=${needle}`, `${A}/users?q=${needle}`, adminToken);
  await time('GET /admin/users/{heaviest user}', `${A}/users/${fixture.heavyUserId}`, adminToken);
  await time('GET /admin/revenue?days=30', `${A}/revenue?days=30`, adminToken);
  await time('GET /admin/revenue?days=365', `${A}/revenue?days=365`, adminToken);
  await time('GET /admin/health', `${A}/health`, adminToken);
  await time('GET /admin/deposits', `${A}/deposits`, adminToken);
  await time('GET /admin/audit', `${A}/audit`, adminToken);
  // The request log across users (sql/034): every filter alone, each through its own index.
  const R = `${A}/requests`;
  let rcursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const page = JSON.parse(await get(`${R}?limit=200${rcursor ? `&cursor=${rcursor}` : ''}`, adminToken)) as {
      next_cursor: string | null;
    };
    if (!page.next_cursor) break;
    rcursor = page.next_cursor;
  }
  await time('GET /admin/requests', R, adminToken);
  if (rcursor)
    await time('GET /admin/requests, a page 10,000 rows back (cursor)', `${R}?cursor=${rcursor}`, adminToken);
  await time('GET /admin/requests?user={heaviest user}', `${R}?user=${fixture.heavyUserId}`, adminToken);
  await time(
    "GET /admin/requests?key=… (a light user's key)",
    `${R}?key=${keyIdOf(Math.max(2, fixture.users - 1), 0, K)}`,
    adminToken,
  );
  await time(`GET /admin/requests?model=${rareModel}`, `${R}?model=${rareModel}`, adminToken);
  await time('GET /admin/requests?model=… (no such rows)', `${R}?model=retired-model`, adminToken);
  await time(
    `GET /admin/requests?route=fake-openai/upstream-${rareModel}`,
    `${R}?route=fake-openai/upstream-${rareModel}`,
    adminToken,
  );
  await time('GET /admin/requests?route=… (no such rows)', `${R}?route=gone/route`, adminToken);
  await time('GET /admin/requests?status=error', `${R}?status=error`, adminToken);
  await time('GET /admin/requests?status=502', `${R}?status=502`, adminToken);
  await time('GET /admin/requests?status=402 (refusals only)', `${R}?status=402`, adminToken);
  await time('GET /admin/requests?status=200', `${R}?status=200`, adminToken);
  await time(
    'GET /admin/requests?from=…&to=… (one day, mid-span)',
    `${R}?from=${iso(mid)}&to=${iso(mid + DAY_MS)}`,
    adminToken,
  );
  await time(
    `GET /admin/requests?model=${rareModel}&from=…&to=… (one day)`,
    `${R}?model=${rareModel}&from=${iso(mid)}&to=${iso(mid + DAY_MS)}`,
    adminToken,
  );
  await timeExport(
    'GET /admin/requests/export?from=… (the last hour)',
    `${R}/export?from=${iso(now - 3_600_000)}`,
    adminToken,
    Math.min(opts.runs, 5),
  );
  progress('admin timed');
  return rows;
}
