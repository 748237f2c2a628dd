// WORKERS > 1: processes share the port (and OPS_PORT), and /metrics speaks for all of them.
import t from 'tap';
import http from 'node:http';
import { childEnv, freePort, startServe } from '../helpers/child.js';
import { REDIS_URL, testDatabase, testRedisPrefix } from '../helpers/stores.js';

/** One request on a fresh connection, so the kernel may hand it to any worker. */
function getFresh(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

t.test('two workers serve one port; /metrics on OPS_PORT sums over both', async (t) => {
  const opsPort = await freePort();
  const env = childEnv({ DATABASE_URL: await testDatabase(t), REDIS_URL, REDIS_PREFIX: testRedisPrefix(), WORKERS: '2', OPS_PORT: String(opsPort) });
  const serve = await startServe(t, env, 60_000);
  t.match(serve.stdout(), /with 2 workers/);
  const N = 24;
  for (let i = 0; i < N; i++) t.equal((await getFresh(`${serve.url}/healthz`)).status, 200);
  const metrics = (await getFresh(`http://127.0.0.1:${opsPort}/metrics`)).body;
  const line = metrics.split('\n').find((l) => l.startsWith('airouter_http_requests_total{') && l.includes('route="healthz"') && l.includes('status="200"'));
  t.equal(Number(line?.split(' ').at(-1)), N, 'every worker\'s requests are counted');
  const { code } = await serve.stop('SIGTERM');
  t.equal(code, 0, 'the primary stops its workers and exits 0');
  const refused = await getFresh(`${serve.url}/healthz`).then(() => false, () => true);
  t.ok(refused, 'no worker is left listening');
});
