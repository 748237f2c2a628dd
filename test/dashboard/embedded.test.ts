// The dashboard on the embedded stores (PGlite, in-process hot store), as `npm start` runs it
// out of the box: migrations (triggers included), signup, usage totals, public stats, a provider
// key saved in the console.

import t from 'tap';
import { statSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { setAdmin } from '../../src/admin/accounts.js';
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
  const u = await signUp({ gw, sink, api, up });
  const { creditUser } = await import('../../src/accounts/users.js');
  await creditUser(gw.services.sql, gw.services.hot, u.userId, 1_000_000_000n, {
    method: 'operator',
    amount: '1',
    currency: 'USD',
  });
  const key = (await api('POST', '/keys', { token: u.session })).json.key;
  /** One chat request with the user's key: its status once its answer is read. */
  const chat = async () => {
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.body.text();
    return res.statusCode;
  };
  t.equal(await chat(), 200);
  const stats = await eventually(async () => {
    const r = (await api('GET', '/usage-stats?range=24h', { token: u.session })).json;
    return r.requests === 1 ? r : undefined;
  }, 5000);
  t.ok(stats, 'the request shows in the totals');
  const pub = await request(`${gw.url}/api/public/stats`);
  t.match(await pub.body.json(), { requests_24h: 1, requests_total: 1 });

  // A provider key saved in the console: the embedded default seals it with a secret of its own
  // in DATA_DIR (no PROVIDER_KEY_SECRET needed), and calls carry it.
  await setAdmin(gw.services.sql, { id: null, label: 'test setup' }, u.userId, true);
  const saved = await api('POST', '/api/admin/providers/fake-openai/keys', {
    token: u.session,
    body: { key: 'sk-embedded-console-key-4242' },
  });
  t.equal(saved.status, 201, saved.text);
  t.equal(
    statSync(path.join(gw.services.config.dataDir, 'provider-key.secret')).mode & 0o777,
    0o600,
    "the secret is the owner's alone",
  );
  up.reset();
  t.equal(await chat(), 200);
  t.equal(
    up.requests.at(-1)?.headers.authorization,
    'Bearer sk-embedded-console-key-4242',
    "the saved key, not the environment's",
  );
});
