// No 5xx is reachable by input (issue 48): every operation of the dashboard's and the admin's
// OpenAPI documents, and every inference route, is sent hostile values (NULs, lone surrogates,
// numbers past what money or Postgres can hold, megabyte strings, the wrong types) in each of
// its path and query parameters and body fields, and must answer below 500. And a balance
// never passes the most it may hold: the credit that would is refused, the balance unmoved.

import t, { type Test } from 'tap';
import { setAdmin } from '../../src/admin/accounts.js';
import { responsesUpstream, testCatalogue } from '../helpers/gateway.js';
import { dashboardClient, signUp, startDashboard } from '../helpers/dashboard.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway } from '../helpers/gateway.js';

const HOSTILE: unknown[] = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  '%00',
  '',
  ' ',
  'x'.repeat(100_000),
  '99999999999999999999',
  '-1',
  '1e400',
  '0.0000000001',
  'NaN',
  1e20,
  -1,
  1e308,
  0.5,
  Number.MAX_SAFE_INTEGER + 2,
  null,
  true,
  [],
  {},
  [['\u0000']],
  { a: '\u0000' },
];
/** The same as path or query text (a JSON value's text where it is not a string). */
const asText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
/** Escaped for a URL; a lone surrogate, which has no UTF-8, as the bytes of its CESU-8 form. */
const enc = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80';
  }
};

interface Op {
  method: string;
  path: string;
  params: { name: string; in: string }[];
  body?: string[];
}

/** The operations of an OpenAPI document, each with its parameters and its body's fields. */
function operations(doc: any): Op[] {
  const resolve = (s: any): any => (s?.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()]) : s);
  const ops: Op[] = [];
  for (const [path, methods] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      const schema = resolve(op.requestBody?.content?.['application/json']?.schema);
      ops.push({
        method: method.toUpperCase(),
        path,
        params: op.parameters ?? [],
        body: schema ? Object.keys(schema.properties ?? { value: {} }) : undefined,
      });
    }
  }
  return ops;
}

const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: '10000' });
const admin = await signUp(s);
await setAdmin(s.gw.services.sql, { id: null, label: 'test setup' }, admin.userId, true);
const api = dashboardClient(s.gw, t);

/** Every variant of `op`: one hostile value at a time in one parameter or body field. */
async function probe(t: Test, base: string, op: Op, token: string): Promise<string[]> {
  const failures: string[] = [];
  const fill = (path: string, value?: unknown, param?: string) =>
    path.replace(/\{(\w+)\}/g, (_, name: string) =>
      enc(name === param ? asText(value) : '00000000-0000-4000-8000-000000000000'),
    );
  const send = async (what: string, path: string, body?: unknown) => {
    const r = await api(op.method, `${base}${path}`, { token, body });
    if (r.status >= 500) failures.push(`${op.method} ${op.path} ${what}: ${r.status} ${r.text.slice(0, 160)}`);
  };
  for (const value of HOSTILE) {
    for (const p of op.params) {
      if (p.in === 'path')
        await send(
          `path ${p.name}=${asText(value).slice(0, 20)}`,
          fill(op.path, value, p.name),
          op.body ? {} : undefined,
        );
      else if (p.in === 'query')
        await send(
          `query ${p.name}=${asText(value).slice(0, 20)}`,
          `${fill(op.path)}?${p.name}=${enc(asText(value))}`,
          op.body ? {} : undefined,
        );
    }
    for (const field of op.body ?? [])
      await send(`body ${field}=${asText(value).slice(0, 20)}`, fill(op.path), { [field]: value });
    if (op.body)
      await send(
        `body=${asText(value).slice(0, 20)}`,
        fill(op.path),
        typeof value === 'string' ? JSON.stringify(value) : value,
      );
  }
  t.pass(`${op.method} ${op.path}`);
  return failures;
}

// Sessions are what these run on: the operations that end them are left out.
const ENDS_SESSIONS = new Set(['/logout', '/logout-all', '/password']);

t.test('the dashboard API: no hostile value in any parameter or field reaches a 5xx', async (t) => {
  const doc = (await api('GET', '/openapi.json')).json;
  const failures: string[] = [];
  for (const op of operations(doc))
    if (!ENDS_SESSIONS.has(op.path)) failures.push(...(await probe(t, '', op, admin.session)));
  t.same(failures, [], 'every answer below 500');
});

t.test('the admin API: no hostile value in any parameter or field reaches a 5xx', async (t) => {
  const doc = (await api('GET', '/api/admin/openapi.json', { token: admin.session })).json;
  t.ok(doc?.paths, 'the admin document');
  const failures: string[] = [];
  for (const op of operations(doc)) failures.push(...(await probe(t, '/api/admin', op, admin.session)));
  t.same(failures, [], 'every answer below 500');
});

t.test('the inference routes: no hostile value in a path or a field reaches a 5xx', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const gw = await startTestGateway(t, {
    upstream: fake.url,
    catalogue: testCatalogue({ upstream: fake.url, extra: responsesUpstream(fake.url) }),
  });
  const u = await gw.user('10');
  const headers = {
    authorization: `Bearer ${u.key}`,
    'x-api-key': u.key,
    'x-goog-api-key': u.key,
    'anthropic-version': '2023-06-01',
    'content-type': 'application/json',
  };
  const bodies: [string, string, Record<string, unknown>][] = [
    ['POST', '/v1/chat/completions', { model: 'oa-model', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }],
    ['POST', '/v1/messages', { model: 'an-model', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }],
    ['POST', '/v1/messages/count_tokens', { model: 'an-model', messages: [{ role: 'user', content: 'hi' }] }],
    ['POST', '/v1/responses', { model: 'oa-model', input: 'hi', max_output_tokens: 5 }],
    ['POST', '/v1/embeddings', { model: 'oa-model', input: 'hi' }],
    ['POST', '/v1beta/models/oa-model:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }],
  ];
  const failures: string[] = [];
  const send = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${gw.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    if (r.status >= 500)
      failures.push(`${method} ${path} ${JSON.stringify(body)?.slice(0, 80)}: ${r.status} ${text.slice(0, 160)}`);
  };
  for (const value of HOSTILE) {
    for (const [method, path, body] of bodies)
      for (const field of Object.keys(body)) await send(method, path, { ...body, [field]: value });
    for (const path of ['/v1/responses/', '/v1/models/', '/v1beta/models/'])
      await send('GET', `${path}${enc(asText(value))}`);
    await send('GET', `/v1/responses/${enc(asText(value))}/input_items`);
    await send('DELETE', `/v1/responses/${enc(asText(value))}`);
    await send('POST', '/v1/responses', { model: 'oa-model', input: 'hi', previous_response_id: value });
  }
  t.same(failures, [], 'every answer below 500');
});

t.test('a balance holds at most $1,000,000,000: the credit that would pass it is refused, nothing moves', async (t) => {
  const user = await signUp(s);
  const credit = (amount: string) =>
    api('POST', `/api/admin/users/${user.userId}/credit`, {
      token: admin.session,
      body: { amount_usd: amount, reason: 'test' },
    });
  t.equal((await credit('999999999')).status, 200, 'up to the most a balance holds');
  const over = await credit('1.5');
  t.equal(over.status, 400, 'one more dollar and a half would pass it');
  t.equal(over.json.error.code, 'amount_out_of_range');
  t.equal((await credit('1')).status, 200, 'exactly the most is allowed');
  const [{ balance_nano }] = await s.gw.services.sql<
    { balance_nano: bigint }[]
  >`SELECT balance_nano FROM users WHERE id = ${user.userId}`;
  t.equal(balance_nano, 1_000_000_000n * 1_000_000_000n, 'the balance is what the accepted credits made it');
  t.equal((await s.gw.services.ledger.balance(user.userId)).balance, balance_nano, 'and the hot balance with it');
});
