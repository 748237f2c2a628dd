// GET /api/public/stats: no auth, nothing personal, exact counts, cached for a few seconds.

import t from 'tap';
import { request } from 'undici';
import { signUp, startDashboard } from '../helpers/dashboard.js';

const KEYS = ['models', 'requests_24h', 'requests_total', 'tokens_24h', 'tokens_total', 'uptime_s'];

async function stats(url: string) {
  const res = await request(`${url}/api/public/stats`);
  return { status: res.statusCode, headers: res.headers, json: (await res.body.json()) as Record<string, number> };
}

t.test('public stats', async (t) => {
  const s = await startDashboard(t);
  const { gw } = s;
  const sql = gw.services.sql;

  const empty = await stats(gw.url);
  t.equal(empty.status, 200, 'no session needed');
  t.same(Object.keys(empty.json).sort(), KEYS, 'exactly these fields');
  for (const k of KEYS) t.ok(Number.isInteger(empty.json[k]) && empty.json[k] >= 0, `${k} is a count`);
  t.match(empty.json, { models: 3, requests_24h: 0, tokens_24h: 0, requests_total: 0, tokens_total: 0 });
  t.match(empty.headers['cache-control'], /max-age=\d+/);

  const u = await signUp(s);
  const now = Date.now();
  const row = (ageMs: number, prompt: number, completion: number) => ({
    user_id: u.userId,
    request_id: `r${ageMs}`,
    model: 'oa-model',
    surface: 'chat',
    stream: false,
    status: 200,
    prompt_tokens: prompt,
    completion_tokens: completion,
    created_at: new Date(now - ageMs),
  });
  await sql`INSERT INTO usage_records ${sql([
    row(60_000, 10, 5), // a minute ago
    row(24 * 3600_000 - 120_000, 100, 50), // just inside the 24 h window, in its partial first hour
    row(24 * 3600_000 + 120_000, 1000, 500), // just outside it
    row(40 * 24 * 3600_000, 7, 3), // long ago
  ])}`;

  const cached = await stats(gw.url);
  t.equal(cached.json.requests_total, 0, 'cached for a few seconds');

  await gw.services.hot.deleteCached('public-stats:v1');
  const fresh = await stats(gw.url);
  t.match(fresh.json, { requests_24h: 2, tokens_24h: 165, requests_total: 4, tokens_total: 1675 });
  t.ok(fresh.json.uptime_s >= empty.json.uptime_s);
  t.notMatch(JSON.stringify(fresh.json), /@|user|email|key/i, 'nothing personal');

  // Only GET is served here.
  const post = await request(`${gw.url}/api/public/stats`, { method: 'POST', body: '{}' });
  t.equal(post.statusCode, 404);
  t.equal(((await post.body.json()) as any).error.code, 'not_found');
});
