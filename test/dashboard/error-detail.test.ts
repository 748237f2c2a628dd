// Refusals name the field, the rule and its figures, so the web app can say them in the
// user's language next to the field; every code and reason sent is in the shared vocabulary.

import t from 'tap';
import { ERROR_CODES, FIELD_REASONS } from '../../src/dashboard/error-codes.js';
import { signUp, startDashboard } from '../helpers/dashboard.js';

t.test('validation errors carry param, reason and params', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: '1000' });
  const { api } = s;
  const u = await signUp(s);
  const token = u.session;
  const cases: [string, string, unknown, object][] = [
    [
      'POST',
      '/register',
      { email: 'not-an-email' },
      { code: 'invalid_request', param: 'email', reason: 'invalid_email' },
    ],
    ['POST', '/register', {}, { code: 'invalid_request', param: 'email', reason: 'required' }],
    [
      'POST',
      '/register',
      { email: `${'a'.repeat(250)}@example.com` },
      { code: 'invalid_request', param: 'email', reason: 'too_long', params: { max: 254 } },
    ],
    [
      'POST',
      '/verify',
      { token: 'A'.repeat(43), password: 'short' },
      { code: 'invalid_request', param: 'password', reason: 'too_short', params: { min: 8 } },
    ],
    [
      'POST',
      '/verify',
      { token: 'has spaces', password: 'long enough password' },
      { code: 'invalid_request', param: 'token', reason: 'invalid_format' },
    ],
    [
      'POST',
      '/keys',
      { name: 'x'.repeat(101) },
      { code: 'invalid_request', param: 'name', reason: 'too_long', params: { max: 100 } },
    ],
    ['POST', '/keys', { name: 'a\u0001b' }, { code: 'invalid_request', param: 'name', reason: 'control_characters' }],
    [
      'POST',
      '/keys',
      { rpm_limit: 0 },
      { code: 'invalid_request', param: 'rpm_limit', reason: 'too_small', params: { min: 1 } },
    ],
    ['POST', '/keys', { rpm_limit: 1.5 }, { code: 'invalid_request', param: 'rpm_limit', reason: 'not_integer' }],
    [
      'POST',
      '/keys',
      { spend_limit_usd: '5' },
      { code: 'invalid_request', param: 'spend_limit_period', reason: 'period_required' },
    ],
    [
      'POST',
      '/keys',
      { spend_limit_period: 'day' },
      { code: 'invalid_request', param: 'spend_limit_period', reason: 'period_without_cap' },
    ],
    [
      'POST',
      '/keys',
      { spend_limit_usd: '0', spend_limit_period: 'day' },
      { code: 'invalid_request', param: 'spend_limit_usd', reason: 'invalid_amount' },
    ],
    [
      'POST',
      '/keys',
      { spend_limit_usd: '5', spend_limit_period: 'year' },
      {
        code: 'invalid_request',
        param: 'spend_limit_period',
        reason: 'not_allowed',
        params: { allowed: ['day', 'week', 'month', 'total'] },
      },
    ],
    ['GET', '/usage?range=1y', undefined, { code: 'invalid_range', param: 'range', reason: 'not_allowed' }],
    ['GET', '/usage?range=7d&from=2025-01-01', undefined, { code: 'invalid_range', reason: 'mixed_range' }],
    ['GET', '/usage?from=2025-02-30', undefined, { code: 'invalid_range', param: 'from', reason: 'invalid_date' }],
    [
      'GET',
      '/usage?limit=501',
      undefined,
      { code: 'invalid_request', param: 'limit', reason: 'too_large', params: { max: 500 } },
    ],
    ['GET', '/usage?model=a&model=b', undefined, { code: 'invalid_request', param: 'model', reason: 'repeated' }],
    ['GET', '/usage?cursor=zzz', undefined, { code: 'invalid_cursor', param: 'cursor', reason: 'invalid_cursor' }],
  ];
  for (const [method, path, body, want] of cases) {
    const r = await api(method, path, { token, body });
    t.equal(r.status, 400, `${method} ${path} ${JSON.stringify(body)}: 400`);
    t.match(r.json.error, want, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(r.json.error)}`);
    t.ok((ERROR_CODES as readonly string[]).includes(r.json.error.code), 'a code of the vocabulary');
    if (r.json.error.reason)
      t.ok((FIELD_REASONS as readonly string[]).includes(r.json.error.reason), 'a reason of the vocabulary');
  }
  const session = await api('POST', '/login', { body: { email: u.email, password: 'wrong password' } });
  t.same(Object.keys(session.json.error).sort(), ['code', 'message'], 'no field detail where no field is at fault');
});
