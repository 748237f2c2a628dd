// Operator details (metrics, which store is down) are not for everyone: on the public port they
// need METRICS_TOKEN; OPS_PORT serves them on 127.0.0.1 without one.

import { networkInterfaces } from 'node:os';
import t from 'tap';
import { loadConfig } from '../../src/config.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { freePort } from '../helpers/child.js';
import { startTestGateway } from '../helpers/gateway.js';
import { METRICS_TOKEN, OPERATOR } from '../helpers/http.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());

const get = async (url: string, headers: Record<string, string> = {}) => {
  const r = await fetch(url, { headers });
  return { status: r.status, headers: r.headers, text: await r.text() };
};

t.test('METRICS_TOKEN guards /metrics and the details of /readyz on the public port', async (t) => {
  const gw = await startTestGateway(t, { upstream: fake.url });
  const none = await get(`${gw.url}/metrics`);
  t.equal(none.status, 401, 'no token');
  t.equal(none.headers.get('www-authenticate'), 'Bearer');
  t.notMatch(none.text, /airouter_/);
  const wrong = await get(`${gw.url}/metrics`, { authorization: `Bearer ${METRICS_TOKEN}x` });
  t.equal(wrong.status, 403, 'a wrong token');
  t.notMatch(wrong.text, /airouter_/);
  t.equal((await get(`${gw.url}/metrics`, { authorization: 'Basic abc' })).status, 401, 'another scheme');
  const right = await get(`${gw.url}/metrics`, OPERATOR);
  t.equal(right.status, 200);
  t.match(right.text, /# TYPE airouter_http_requests_total counter/);

  t.same(JSON.parse((await get(`${gw.url}/readyz`)).text), { status: 'ready' }, 'status only without the token');
  t.same(
    JSON.parse((await get(`${gw.url}/readyz`, { authorization: 'Bearer wrong-token-000000' })).text),
    { status: 'ready' },
    'and with a wrong one',
  );
  t.same(
    JSON.parse((await get(`${gw.url}/readyz`, OPERATOR)).text),
    { status: 'ready', postgres: 'ok', redis: 'ok', outbox: 0, stopping: false },
    'details with it',
  );
  t.equal((await get(`${gw.url}/healthz`)).status, 200, '/healthz is for everyone');
});

t.test('without METRICS_TOKEN the public port serves no metrics at all', async (t) => {
  const gw = await startTestGateway(t, { upstream: fake.url, env: { METRICS_TOKEN: '' } });
  const r = await get(`${gw.url}/metrics`, OPERATOR);
  t.equal(r.status, 403);
  t.match(JSON.parse(r.text).error.message, /OPS_PORT.*METRICS_TOKEN/);
  t.same(JSON.parse((await get(`${gw.url}/readyz`, OPERATOR)).text), { status: 'ready' });
});

t.test('OPS_PORT: 127.0.0.1 only, no token needed', async (t) => {
  const opsPort = await freePort();
  const gw = await startTestGateway(t, {
    upstream: fake.url,
    env: { METRICS_TOKEN: '', HOST: '0.0.0.0', OPS_PORT: String(opsPort) },
  });
  const ops = `http://127.0.0.1:${opsPort}`;
  const m = await get(`${ops}/metrics`);
  t.equal(m.status, 200);
  t.match(m.text, /# TYPE airouter_http_requests_total counter/);
  t.same(JSON.parse((await get(`${ops}/readyz`)).text), {
    status: 'ready',
    postgres: 'ok',
    redis: 'ok',
    outbox: 0,
    stopping: false,
  });
  t.equal((await get(`${ops}/healthz`)).status, 200);
  t.equal((await get(`${ops}/v1/models`)).status, 404, 'nothing but the operations endpoints');
  t.equal((await get(`${gw.url}/metrics`)).status, 403, 'the public port still refuses');

  // Not reachable on another address of this machine, where the public port is.
  const other = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal);
  if (!other) return t.comment('no non-loopback IPv4 address here');
  t.equal((await get(`http://${other.address}:${gw.port}/healthz`)).status, 200, 'the public port answers there');
  const refused = await fetch(`http://${other.address}:${opsPort}/metrics`).then(
    () => false,
    () => true,
  );
  t.ok(refused, 'OPS_PORT does not');
});

t.test('OPS_PORT in use, bad values: start-up fails naming it', async (t) => {
  t.throws(() => loadConfig({ OPS_PORT: '70000' }), /OPS_PORT must be at most 65535/);
  t.throws(() => loadConfig({ OPS_PORT: 'x' }), /OPS_PORT must be a whole number/);
  const err = (await startTestGateway(t, { upstream: fake.url, env: { METRICS_TOKEN: 'short' } }).catch(
    (e) => e,
  )) as Error;
  t.match(err.message, /METRICS_TOKEN must be at least 16 characters/);
  t.notMatch(err.message, /short/, 'the token is not echoed');
  const gw = await startTestGateway(t, { upstream: fake.url });
  const busy = (await startTestGateway(t, { upstream: fake.url, env: { OPS_PORT: String(gw.port) } }).catch(
    (e) => e,
  )) as Error;
  t.match(busy.message, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${gw.port}`));
});
