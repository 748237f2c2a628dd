// The usage log's status filter and request ids, and its CSV export: the same filters, every
// matching row, exact money, the key's name, and no cell a spreadsheet would run as a formula.

import t from 'tap';
import { request } from 'undici';
import { creditUser } from '../../src/accounts/users.js';
import { csvBatches, csvCell } from '../../src/dashboard/usage-export.js';
import { signUp, startDashboard } from '../helpers/dashboard.js';
import { parseCsv } from '../helpers/csv.js';

t.test('csv cells', async (t) => {
  t.equal(csvCell('plain'), 'plain');
  t.equal(csvCell('a,b'), '"a,b"');
  t.equal(csvCell('say "hi"'), '"say ""hi"""');
  t.equal(csvCell('=1+1'), `"'=1+1"`, 'a formula is defused');
  t.equal(csvCell('-5'), `"'-5"`, 'a leading minus in text too');
  t.equal(csvCell(-5), '-5', 'numbers stay numbers');
  t.equal(csvCell(null), '');
});

t.test('csv batches: a small first batch, then every row once across the batches', async (t) => {
  // Rows in keyset order (newest first, as the logs are read), each its own cursor.
  const log = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ cursor_at: String(1e9 - i), id: BigInt(n - i), v: i }));
  for (const [n, max] of [
    [0, 100_000],
    [499, 100_000],
    [500, 100_000],
    [501, 100_000],
    [5_500, 100_000],
    [5_501, 100_000],
    [12_345, 100_000],
    [12_345, 5_600],
  ] as const) {
    const rows = log(n);
    const limits: number[] = [];
    const read = async (after: { at: string; id: string } | undefined, limit: number) => {
      limits.push(limit);
      const from = after ? rows.findIndex((r) => r.id.toString() === after.id) + 1 : 0;
      return rows.slice(from, from + limit);
    };
    const chunks: string[] = [];
    for await (const chunk of csvBatches(['v'], read, (r) => [r.v], max)) chunks.push(chunk);
    const lines = chunks.join('').split('\r\n').slice(0, -1);
    const want = Math.min(n, max);
    t.equal(lines[0], 'v', `${n} rows: the header first`);
    t.same(
      lines.slice(1).map(Number),
      rows.slice(0, want).map((r) => r.v),
      `${n} rows, at most ${max}: each once, in order`,
    );
    t.equal(limits[0], 500, `${n} rows: the first read asks for 500`);
    t.ok(
      limits.slice(1).every((l) => l <= 5_000),
      `${n} rows: the later reads 5,000 at most`,
    );
    t.ok(limits.length <= Math.ceil(Math.max(0, want - 500) / 5_000) + 2, `${n} rows: no read past the end`, {
      limits,
    });
  }
});

t.test('status filter, request ids and the CSV export', async (t) => {
  const s = await startDashboard(t);
  const { api, gw } = s;
  const u = await signUp(s);
  const token = u.session;
  await creditUser(gw.services.sql, gw.services.hot, u.userId, 1_000_000_000n, {
    method: 'operator',
    amount: '1',
    currency: 'USD',
  });
  const k = (await api('POST', '/keys', { token, body: { name: '=HYPERLINK("http://x")' } })).json;
  const [{ id: keyRow }] = await gw.services.sql<{ id: string }[]>`SELECT id FROM api_keys WHERE id = ${k.id}`;
  t.ok(keyRow);
  // Two records through the gateway, and one with an error status written as the writer would
  // (refusals through the gateway: refusals.test.ts).
  for (let i = 0; i < 2; i++) {
    const r = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${k.key}`,
        'content-type': 'application/json',
        'x-request-id': `req-export-${i}`,
      },
      body: JSON.stringify({ model: 'oa-model', max_tokens: 20, messages: [{ role: 'user', content: 'Hello' }] }),
    });
    await r.body.text();
    t.equal(r.statusCode, 200);
  }
  await gw.services
    .sql`INSERT INTO usage_records (user_id, key_id, request_id, model, surface, stream, status, latency_ms)
    VALUES (${u.userId}, ${k.id}, 'req-refused', 'oa-model', 'messages', false, 429, 3)`;
  let all: any[] = [];
  for (let i = 0; i < 50 && all.length < 3; i++) {
    all = (await api('GET', '/usage?range=24h', { token })).json.data;
    if (all.length < 3) await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(all.length, 3, 'three records');
  t.same(
    all.map((r) => r.request_id).sort(),
    ['req-export-0', 'req-export-1', 'req-refused'],
    'each with its request id',
  );
  t.same(
    (await api('GET', '/usage?status=ok', { token })).json.data.map((r: any) => r.status),
    [200, 200],
    'status=ok',
  );
  t.same(
    (await api('GET', '/usage?status=error', { token })).json.data.map((r: any) => r.request_id),
    ['req-refused'],
    'status=error',
  );
  t.same(
    (await api('GET', '/usage?status=429', { token })).json.data.map((r: any) => r.request_id),
    ['req-refused'],
    'one status code',
  );
  const bad = await api('GET', '/usage?status=fine', { token });
  t.match(bad.json.error, { code: 'invalid_request', param: 'status', reason: 'not_allowed' });

  const csv = await api('GET', '/usage.csv?range=24h&status=ok', { token });
  t.equal(csv.status, 200);
  t.match(csv.headers['content-type'], /^text\/csv/);
  t.match(csv.headers['content-disposition'], /^attachment; filename="usage-\d{4}-\d{2}-\d{2}\.csv"$/);
  t.equal(csv.headers['content-length'], undefined, 'streamed: no length up front');
  t.equal(csv.headers['transfer-encoding'], 'chunked');
  const rows = parseCsv(csv.text);
  t.same(rows[0], [
    'id',
    'created_at',
    'request_id',
    'model',
    'key_id',
    'key_name',
    'surface',
    'stream',
    'status',
    'prompt_tokens',
    'cached_tokens',
    'completion_tokens',
    'cost_usd',
    'official_cost_usd',
    'latency_ms',
    'ttft_ms',
    'error_code',
    'requests',
  ]);
  t.equal(rows.length, 3, 'a header and the two matching rows');
  const ok = all.filter((r) => r.status === 200);
  for (const [i, r] of ok.entries()) {
    const line = rows[i + 1];
    t.same(
      [line[0], line[2], line[12], line[8]],
      [r.id, r.request_id, r.cost_usd, '200'],
      `row ${i}: id, request id, exact cost, status`,
    );
    t.equal(line[5], `'=HYPERLINK("http://x")`, 'the key name, defused');
  }
  const byKey = await api('GET', `/usage.csv?key_id=${k.id}&status=error`, { token });
  t.same(
    parseCsv(byKey.text)
      .slice(1)
      .map((r) => r[2]),
    ['req-refused'],
    'filters by key and status',
  );
  t.equal((await api('GET', '/usage.csv')).status, 401, 'needs a session');
  const other = await signUp(s);
  t.equal(
    parseCsv((await api('GET', '/usage.csv', { token: other.session })).text).length,
    1,
    "another user's export has only the header",
  );
});

t.test('a large export streams, every row once, in order, past the batches it is read in', async (t) => {
  const s = await startDashboard(t);
  const { api, gw } = s;
  const u = await signUp(s);
  // 12,345 records (two whole batches of 5,000 and a part), a second apart, at no cost.
  const n = 12_345;
  await gw.services
    .sql`INSERT INTO usage_records (user_id, request_id, model, surface, stream, status, latency_ms, created_at)
    SELECT ${u.userId}, 'req-big-' || i, 'oa-model', 'chat', false, 200, 1, now() - make_interval(secs => i)
    FROM generate_series(1, ${n}::int) i`;
  const res = await request(`${gw.url}/api/dashboard/usage.csv?range=24h`, {
    headers: { authorization: `Bearer ${u.session}` },
  });
  t.equal(res.statusCode, 200);
  let chunks = 0;
  let text = '';
  for await (const chunk of res.body) {
    chunks++;
    text += chunk.toString();
  }
  t.ok(chunks > 1, `it came in ${chunks} chunks`);
  const rows = parseCsv(text).slice(1);
  t.equal(rows.length, n, 'every record');
  t.equal(new Set(rows.map((r) => r[0])).size, n, 'each once');
  t.same([rows[0]![2], rows.at(-1)![2]], ['req-big-1', `req-big-${n}`], 'newest first, to the oldest');

  // A client that goes away part-way leaves nothing behind: the next export is whole.
  const cut = await request(`${gw.url}/api/dashboard/usage.csv?range=24h`, {
    headers: { authorization: `Bearer ${u.session}` },
    highWaterMark: 1024,
  });
  for await (const _ of cut.body) break;
  const again = await api('GET', '/usage.csv?range=24h', { token: u.session });
  t.equal(parseCsv(again.text).length, n + 1, 'the next export after a cut one is whole');
});
