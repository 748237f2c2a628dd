// The dashboard on the embedded stores (PGlite, in-process hot store), as `npm start` runs it
// out of the box: migrations (triggers included), signup, usage totals, public stats.

import t from 'tap';
import { request } from 'undici';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/http.js';
import { dashboardClient, signUp, startSmtpSink } from '../helpers/dashboard.js';

t.test('embedded stores', async (t) => {
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const sink = await startSmtpSink(t);
  const gw = await startTestGateway(t, { upstream: up.url, embedded: true, env: { SMTP_URL: sink.url } });
  const api = dashboardClient(gw, t);
  const u = await signUp({ gw, sink, api });
  const { creditUser } = await import('../../src/accounts/users.js');
  await creditUser(gw.gw.sql, gw.gw.hot, u.userId, 1_000_000_000n, { method: 'operator', amount: '1', currency: 'USD' });
  const key = (await api('POST', '/keys', { token: u.session })).json.key;
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(res.statusCode, 200);
  await res.body.text();
  const stats = await eventually(async () => {
    const r = (await api('GET', '/usage-stats?range=24h', { token: u.session })).json;
    return r.requests === 1 ? r : undefined;
  }, 5000);
  t.ok(stats, 'the request shows in the totals');
  const pub = await request(`${gw.url}/api/public/stats`);
  t.match(await pub.body.json(), { requests_24h: 1, requests_total: 1 });
});
