// Every endpoint, fed garbage: a 4xx in the dashboard envelope, never a 500.

import t from 'tap';
import { request } from 'undici';
import { creditUser } from '../../src/accounts/users.js';
import { isEnvelope, sharedDashboard, signUp, startDashboard, type ApiResponse } from '../helpers/dashboard.js';

t.test('bad input anywhere is a 4xx with the envelope', async (t) => {
  const s = await sharedDashboard({ LOGIN_MAX_ATTEMPTS: '1000' });
  const { api, gw } = s;
  const u = await signUp(s);
  const token = u.session;
  await creditUser(gw.services.sql, gw.services.hot, u.userId, 1_000_000_000n, {
    method: 'operator',
    amount: '1',
    currency: 'USD',
  });
  await creditUser(gw.services.sql, gw.services.hot, u.userId, 2_000_000_000n, {
    method: 'operator',
    amount: '2',
    currency: 'USD',
  });
  const depositCursor = (await api('GET', '/deposits?limit=1', { token })).json.next_cursor as string;
  t.ok(depositCursor, 'a deposits cursor to misuse');

  const check = (what: string, r: ApiResponse, status: number, code?: string) => {
    t.equal(r.status, status, `${what}: status`);
    t.ok(isEnvelope(r), `${what}: envelope (${r.text.slice(0, 160)})`);
    if (code) t.equal(r.json?.error?.code, code, `${what}: code`);
  };

  const huge = 'x'.repeat(70 * 1024);
  const bodies: [string, unknown[]][] = [
    [
      '/register',
      [
        '{',
        '{"email":',
        'null',
        '[]',
        '"a@b.co"',
        '123',
        'true',
        '{"email":"a@b.co"}x',
        {},
        { email: 123 },
        { email: null },
        { email: ['a@b.co'] },
        { email: {} },
        { email: '' },
        { email: '   ' },
        { email: 'not-an-email' },
        { email: 'a@localhost' },
        { email: `${'a'.repeat(250)}@example.com` },
        { email: `${'a'.repeat(5000)}@b.co` },
        { email: 'a@b.co\r\nBcc: victim@example.com' },
      ],
    ],
    [
      '/verify',
      [
        '{',
        [],
        {},
        { token: 'abc' },
        { password: 'long enough password' },
        { token: 123, password: 'long enough password' },
        { token: 'A'.repeat(43), password: 'short' },
        { token: 'A'.repeat(43), password: 'p'.repeat(1025) },
        { token: 'A'.repeat(43), password: 12345678 },
        { token: 'A'.repeat(300), password: 'long enough password' },
        { token: 'has spaces in it', password: 'long enough password' },
        { token: '', password: 'long enough password' },
      ],
    ],
    [
      '/login',
      [
        '{',
        '[1]',
        {},
        { email: u.email },
        { password: 'x' },
        { email: u.email, password: '' },
        { email: u.email, password: 'p'.repeat(1025) },
        { email: u.email, password: 123 },
        { email: 'e'.repeat(300), password: 'xxxxxxxx' },
        { email: {}, password: [] },
      ],
    ],
  ];
  for (const [path, cases] of bodies) {
    for (const body of cases)
      check(`POST ${path} ${JSON.stringify(body).slice(0, 60)}`, await api('POST', path, { body }), 400);
  }
  check(
    'POST /register huge body',
    await api('POST', '/register', { body: { email: huge } }),
    413,
    'request_too_large',
  );
  check('POST /keys huge body', await api('POST', '/keys', { token, body: { name: huge } }), 413, 'request_too_large');
  check(
    'POST /register malformed JSON',
    await api('POST', '/register', { body: '{"email": "a@b.co",}' }),
    400,
    'invalid_json',
  );

  for (const body of [
    '{',
    '[]',
    '"x"',
    { name: 123 },
    { name: 'n'.repeat(101) },
    { name: 'bad\u0000name' },
    { name: ['x'] },
    { name: {} },
  ]) {
    check(`POST /keys ${JSON.stringify(body).slice(0, 40)}`, await api('POST', '/keys', { token, body }), 400);
  }
  t.equal(
    (await api('POST', '/keys', { token, body: { name: 'n'.repeat(100) } })).status,
    201,
    'a 100-character name is fine',
  );
  t.equal((await api('POST', '/keys', { token, body: { name: null } })).status, 201, 'a null name is no name');

  const usageCursor = Buffer.from('u1|2025-01-01T00:00:00.000000Z|1').toString('base64url');
  const queries: [string, string[], string?][] = [
    [
      '/usage',
      [
        'from=garbage',
        'from=2025-02-30',
        'to=2025-13-01',
        'from=2025-01-01T25:00:00Z',
        'from=2025-01-01T00:00:00+25:00',
        'from=1969-12-31',
        `from=${'9'.repeat(100)}`,
        'from=2025-02-01&to=2025-01-01',
        'range=1y',
        'range=',
        'range=24H',
        'range=24h&from=2025-01-01',
        'limit=0',
        'limit=501',
        'limit=abc',
        'limit=-1',
        'limit=1.5',
        'limit=',
        'limit=99999999999',
        'limit=1&limit=2',
        'cursor=garbage!',
        'cursor=',
        `cursor=${'A'.repeat(300)}`,
        `cursor=${Buffer.from('u1|nope|1').toString('base64url')}`,
        `cursor=${Buffer.from('u1|2025-02-30T00:00:00.000000Z|1').toString('base64url')}`,
        `cursor=${Buffer.from('u1|2025-01-01T00:00:00.000000Z|99999999999999999999').toString('base64url')}`,
        `cursor=${depositCursor}`,
        'key_id=not-a-uuid',
        'key_id=',
        'model=',
        `model=${'m'.repeat(201)}`,
      ],
    ],
    [
      '/usage-stats',
      [
        'range=1y',
        'from=abc',
        'to=2025-02-30',
        'from=2025-02-01&to=2025-01-01',
        'range=7d&to=2025-01-01',
        'from=1&from=2',
      ],
    ],
    [
      '/deposits',
      ['limit=0', 'limit=501', 'cursor=bad!', `cursor=${usageCursor}`, 'range=1y', 'from=2025-02-01&to=2025-01-01'],
    ],
  ];
  for (const [path, qs] of queries) {
    for (const q of qs) {
      const r = await api('GET', `${path}?${q}`, { token });
      check(`GET ${path}?${q.slice(0, 60)}`, r, 400);
      t.match(r.json?.error?.code, /^invalid_(request|range|cursor)$/);
    }
  }
  check('from after to', await api('GET', '/usage?from=2025-02-01&to=2025-01-01', { token }), 400, 'invalid_range');
  check('unknown range', await api('GET', '/usage-stats?range=1y', { token }), 400, 'invalid_range');
  check('bad cursor', await api('GET', '/usage?cursor=xyz', { token }), 400, 'invalid_cursor');
  check("another list's cursor", await api('GET', `/usage?cursor=${depositCursor}`, { token }), 400, 'invalid_cursor');

  // Good ones, for contrast.
  for (const q of [
    'from=2025-01-01',
    'to=2999-01-01',
    'from=2025-01-01T00:00:00Z&to=2025-01-01T00:00:00Z',
    'from=2025-01-01T07:00:00%2B07:00',
    'from=2025-01-01T00:00:00.123456789Z',
    'range=90d',
    'limit=500',
    'limit=1',
    'unknown_param=1',
    `cursor=${usageCursor}`,
  ]) {
    t.equal((await api('GET', `/usage?${q}`, { token })).status, 200, `GET /usage?${q}`);
  }

  // Unknown paths and methods under the prefix.
  for (const [m, p] of [
    ['GET', '/nope'],
    ['GET', ''],
    ['GET', '/'],
    ['PUT', '/keys'],
    ['GET', '/keys/123'],
    ['PATCH', '/keys/00000000-0000-4000-8000-000000000000'],
    ['DELETE', '/usage'],
    ['GET', '/login'],
    ['POST', '/balance'],
    ['GET', '/keys/%E0%A4%A'],
    ['DELETE', '/keys/%'],
    ['DELETE', '/keys/a/00000000-0000-4000-8000-000000000000'],
  ]) {
    check(`${m} /api/dashboard${p}`, await api(m, p, { token }), 404, 'not_found');
  }

  // Authorization headers of every odd shape.
  for (const header of [
    '',
    'Bearer',
    'Bearer ',
    'bearer ars_x',
    'Token abc',
    'Bearer ars_' + 'x'.repeat(100_000 / 2),
  ]) {
    const r = await request(`${gw.url}/api/dashboard/keys`, { headers: { authorization: header } });
    const text = await r.body.text();
    t.ok(
      r.statusCode === 401 || r.statusCode === 431 || r.statusCode === 400,
      `authorization "${header.slice(0, 20)}": ${r.statusCode}`,
    );
    if (r.statusCode === 401)
      t.ok(isEnvelope({ status: r.statusCode, headers: r.headers, text, json: JSON.parse(text) }));
  }

  // Still serving after all that.
  t.equal((await api('GET', '/balance', { token })).status, 200);
});

t.test('NUL and invalid Unicode in any query parameter or body string: 400 invalid_text, never a 500', async (t) => {
  const s = await sharedDashboard({ LOGIN_MAX_ATTEMPTS: '1000' });
  const { api, gw } = s;
  const token = (await signUp(s)).session;
  const refused = (what: string, r: ApiResponse) => {
    t.equal(r.status, 400, `${what}: status (${r.text.slice(0, 120)})`);
    t.ok(isEnvelope(r), `${what}: envelope`);
    t.equal(r.json?.error?.code, 'invalid_text', `${what}: code`);
  };
  refused('usage?model=%00', await api('GET', '/usage?model=%00', { token }));
  t.match(
    (await api('GET', '/usage?model=%00', { token })).json.error.message,
    /Query parameter "model"/,
    'names the parameter',
  );
  for (const q of [
    'model=a%00b',
    'unknown=%00',
    '%00=1',
    'model=%ED%A0%80',
    'model=%FF',
    'model=%E0%A4%A',
    'from=2025-01-01%00',
  ]) {
    refused(`usage?${q}`, await api('GET', `/usage?${q}`, { token }));
  }
  refused('usage-stats', await api('GET', '/usage-stats?range=7d%00', { token }));
  refused('a route that reads no query', await api('GET', '/balance?x=%00', { token }));
  refused('without a session too', await api('GET', '/catalog?x=%00'));

  refused('register email', await api('POST', '/register', { body: { email: 'a\u0000@b.co' } }));
  refused(
    'login password, lone surrogate',
    await api('POST', '/login', { body: '{"email":"a@b.co","password":"abc\\ud800def"}' }),
  );
  refused(
    'a low surrogate alone',
    await api('POST', '/login', { body: '{"email":"a@b.co","password":"\\udc00abcdefgh"}' }),
  );
  refused('an object key', await api('POST', '/keys', { token, body: { 'na\u0000me': 'x' } }));
  refused(
    'an unknown nested field',
    await api('POST', '/keys', { token, body: { name: 'ok', extra: [{ deep: ['fine', 'bad\u0000'] }] } }),
  );
  const r = await request(`${gw.url}/api/dashboard/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Buffer.concat([Buffer.from('{"email":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('@b.co"}')]),
  });
  const text = await r.body.text();
  refused('invalid UTF-8 bytes', { status: r.statusCode, headers: r.headers, text, json: JSON.parse(text) });

  // Valid text outside ASCII is fine, in queries and bodies.
  t.equal((await api('GET', '/usage?model=caf%C3%A9%F0%9F%94%91', { token })).status, 200, 'é and an emoji in a query');
  const named = await api('POST', '/keys', { token, body: { name: 'clé 🔑' } });
  t.equal(named.status, 201, 'a surrogate pair in a body');
  t.equal(named.json.name, 'clé 🔑');
});

t.test('a store outage is a 503 in the envelope, not a 500', async (t) => {
  const s = await startDashboard(t);
  const u = await signUp(s);
  const sql = s.gw.services.sql as any;
  const original = s.gw.services.sql;
  // A client whose every query fails the way a lost connection does.
  const failing: any = new Proxy(original, {
    apply() {
      const err: any = new Error('write CONNECTION_CLOSED');
      err.code = 'CONNECTION_CLOSED';
      return Promise.reject(err);
    },
  });
  s.gw.services.sql = failing;
  t.teardown(() => {
    s.gw.services.sql = sql;
  });
  const r = await s.api('GET', '/keys', { token: u.session });
  s.gw.services.sql = original;
  t.equal(r.status, 503);
  t.ok(isEnvelope(r));
  t.equal(r.json.error.code, 'unavailable');
});
