// The OpenAPI document describes every dashboard route, and real answers fit its schemas: a
// small JSON Schema subset checker (type, const, enum, pattern, required, properties with no
// undocumented extras, items, $ref) run on live responses.

import t from 'tap';
import { creditUser } from '../../src/accounts/users.js';
import { isEnvelope, signUp, startDashboard } from '../helpers/dashboard.js';

type Schema = Record<string, any>;

function check(doc: any, schema: Schema, value: unknown, path: string, errors: string[]): void {
  if (schema.$ref) return check(doc, doc.components.schemas[schema.$ref.split('/').pop()], value, path, errors);
  if ('const' in schema && value !== schema.const) errors.push(`${path}: expected ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.includes(value)) errors.push(`${path}: ${JSON.stringify(value)} not in enum`);
  const types: string[] | undefined = schema.type ? [].concat(schema.type) : undefined;
  if (types) {
    const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
    const ok = types.includes(actual) || (actual === 'integer' && types.includes('number'));
    if (!ok) return void errors.push(`${path}: ${actual} is not ${types.join('|')}`);
  }
  if (typeof value === 'string' && schema.pattern && !new RegExp(schema.pattern).test(value)) errors.push(`${path}: "${value}" does not match ${schema.pattern}`);
  if (typeof value === 'string' && schema.format === 'date-time' && Number.isNaN(Date.parse(value))) errors.push(`${path}: not a date-time`);
  if (Array.isArray(value) && schema.items) value.forEach((v, i) => check(doc, schema.items, v, `${path}[${i}]`, errors));
  if (value && typeof value === 'object' && !Array.isArray(value) && schema.properties) {
    for (const r of schema.required ?? []) if (!(r in value)) errors.push(`${path}.${r}: required but missing`);
    for (const [k, v] of Object.entries(value)) {
      if (!(k in schema.properties)) errors.push(`${path}.${k}: not documented`);
      else check(doc, schema.properties[k], v, `${path}.${k}`, errors);
    }
  }
}

t.test('openapi document', async (t) => {
  const s = await startDashboard(t);
  const { api, gw } = s;
  const res = await api('GET', '/openapi.json');
  t.equal(res.status, 200, 'served without a session');
  const doc = res.json;
  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.servers[0].url, 'https://dash.example.test/api/dashboard');

  const routes = [
    'post /register', 'post /verify', 'post /login', 'post /logout', 'get /keys', 'post /keys', 'delete /keys/{id}', 'get /usage', 'get /usage-stats',
    'get /catalog', 'get /balance', 'get /deposits', 'get /deposits/{id}', 'get /deposit/info', 'post /topup/qris', 'post /deposit/epusdt/create', 'get /openapi.json',
  ];
  const documented = Object.entries(doc.paths).flatMap(([p, ops]: [string, any]) => Object.keys(ops).map((m) => `${m} ${p}`));
  t.same(documented.sort(), [...routes].sort(), 'exactly the routes that exist');

  // Live answers against their documented schemas.
  const u = await signUp(s);
  await creditUser(gw.gw.sql, gw.gw.hot, u.userId, 1_000_000_000n, { method: 'operator', amount: '1', currency: 'USD' });
  const key = (await api('POST', '/keys', { token: u.session, body: { name: 'k' } }));
  await api('POST', '/keys', { token: u.session });
  await gw.gw.sql`INSERT INTO usage_records (user_id, key_id, request_id, model, surface, stream, status, prompt_tokens, completion_tokens, cost_nano, official_cost_nano, ttft_ms)
                  VALUES (${u.userId}, ${key.json.id}, 'r1', 'oa-model', 'chat', true, 200, 10, 5, 123, 456, 42),
                         (${u.userId}, NULL, 'r2', 'an-model', 'messages', false, 499, 0, 0, 0, 0, NULL)`;
  const revoked = await api('DELETE', `/keys/${key.json.id}`, { token: u.session });
  const login = await api('POST', '/login', { body: { email: u.email, password: u.password } });
  const register = await api('POST', '/register', { body: { email: 'someone@example.test' } });

  const live: [string, string, { status: number; json: any }][] = [
    ['/register', 'post', register],
    ['/login', 'post', login],
    ['/keys', 'post', key],
    ['/keys/{id}', 'delete', revoked],
    ['/keys', 'get', await api('GET', '/keys', { token: u.session })],
    ['/usage', 'get', await api('GET', '/usage?limit=1', { token: u.session })],
    ['/usage-stats', 'get', await api('GET', '/usage-stats?range=7d', { token: u.session })],
    ['/usage-stats', 'get', await api('GET', '/usage-stats', { token: u.session })],
    ['/catalog', 'get', await api('GET', '/catalog', { token: u.session })],
    ['/balance', 'get', await api('GET', '/balance', { token: u.session })],
    ['/deposits', 'get', await api('GET', '/deposits', { token: u.session })],
    ['/keys', 'get', await api('GET', '/keys')],
    ['/usage', 'get', await api('GET', '/usage?limit=0', { token: u.session })],
    ['/login', 'post', await api('POST', '/login', { body: { email: u.email, password: 'wrong password' } })],
    // No deposit method is configured here (test/payments/ covers them enabled).
    ['/deposit/info', 'get', await api('GET', '/deposit/info', { token: u.session })],
    ['/topup/qris', 'post', await api('POST', '/topup/qris', { token: u.session, body: { amount_idr: 50000 } })],
    ['/deposit/epusdt/create', 'post', await api('POST', '/deposit/epusdt/create', { token: u.session, body: { amount_usd: 'ten' } })],
    ['/deposits/{id}', 'get', await api('GET', '/deposits/00000000-0000-4000-8000-000000000000', { token: u.session })],
  ];
  for (const [p, m, r] of live) {
    const responses = doc.paths[p][m].responses;
    const spec = responses[String(r.status)];
    t.ok(spec, `${m} ${p}: status ${r.status} is documented`);
    if (!spec) continue;
    const resolved = spec.$ref ? doc.components.responses[spec.$ref.split('/').pop()] : spec;
    const errors: string[] = [];
    check(doc, resolved.content['application/json'].schema, r.json, `${m} ${p} ${r.status}`, errors);
    t.same(errors, [], `${m} ${p} ${r.status} fits its schema`);
    if (r.status >= 400) t.ok(isEnvelope(r as any));
  }
  const usage = live[5][2].json;
  t.ok(usage.next_cursor, 'the usage page has a next cursor');
  t.equal(live[6][2].json.requests, 2);
  t.same(live[14][2].json, { methods: [] }, 'no method is listed without its configuration');
  t.equal(live[15][2].json.error.code, 'method_disabled');
  t.equal(live[16][2].status, 400);
});
