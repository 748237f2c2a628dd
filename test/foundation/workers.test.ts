// WORKERS > 1: processes share the port (and OPS_PORT), /metrics speaks for all of them, and the
// primary runs the one outbox writer.
import t from 'tap';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { childEnv, freePort, startServe, waitFor } from '../helpers/child.js';
import { REDIS_URL, testDatabase, testRedisPrefix } from '../helpers/stores.js';
import { workerExecArgv } from '../../src/cli/serve.js';

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
  const env = childEnv({
    DATABASE_URL: await testDatabase(t),
    REDIS_URL,
    REDIS_PREFIX: testRedisPrefix(t),
    WORKERS: '2',
    OPS_PORT: String(opsPort),
  });
  const serve = await startServe(t, env, 60_000);
  t.match(serve.stdout(), /with 2 workers/);
  const N = 24;
  for (let i = 0; i < N; i++) t.equal((await getFresh(`${serve.url}/healthz`)).status, 200);
  const metrics = (await getFresh(`http://127.0.0.1:${opsPort}/metrics`)).body;
  const line = metrics
    .split('\n')
    .find(
      (l) =>
        l.startsWith('airouter_http_requests_total{') && l.includes('route="healthz"') && l.includes('status="200"'),
    );
  t.equal(Number(line?.split(' ').at(-1)), N, "every worker's requests are counted");
  const { code } = await serve.stop('SIGTERM');
  t.equal(code, 0, 'the primary stops its workers and exits 0');
  const refused = await getFresh(`${serve.url}/healthz`).then(
    () => false,
    () => true,
  );
  t.ok(refused, 'no worker is left listening');
});

t.test('the outbox writer runs once, in the primary, and /metrics reports the outbox once', async (t) => {
  const opsPort = await freePort();
  const prefix = testRedisPrefix(t);
  const env = childEnv({
    DATABASE_URL: await testDatabase(t),
    REDIS_URL,
    REDIS_PREFIX: prefix,
    WORKERS: '2',
    OPS_PORT: String(opsPort),
  });
  const serve = await startServe(t, env, 60_000);
  const redis = new Redis(REDIS_URL);
  t.teardown(() => redis.disconnect());
  // Every writer heartbeats under its consumer name, `host:pid:random`.
  const writers = await waitFor(async () => {
    const keys = await redis.keys(`${prefix}writer:*`);
    return keys.length > 0 ? keys : undefined;
  }, 10_000);
  await new Promise((r) => setTimeout(r, 1500)); // a worker's writer would have beaten by now too
  const all = await redis.keys(`${prefix}writer:*`);
  t.equal(all.length, 1, 'one writer for the whole gateway');
  t.equal(all[0], writers?.[0]);
  t.equal(all[0]!.split(':').at(-2), String(serve.proc.pid), "and it is the primary's");
  const metrics = (await getFresh(`http://127.0.0.1:${opsPort}/metrics`)).body;
  const samples = metrics.split('\n').filter((l) => l.startsWith('airouter_outbox_length'));
  t.same(samples, ['airouter_outbox_length 0'], 'the outbox length once, not once per worker');
  t.equal(metrics.split('\n').filter((l) => l.startsWith('# TYPE airouter_outbox_committed_total ')).length, 1);
  t.equal(
    metrics.split('\n').filter((l) => l.startsWith('# TYPE airouter_http_requests_total ')).length,
    1,
    "the workers' metrics are still merged",
  );
  t.equal((await serve.stop('SIGTERM')).code, 0);
});

t.test('workers get the configured young generation unless node was given one', async (t) => {
  t.same(workerExecArgv([], '', 4), ['--max-semi-space-size=4'], 'the default is added');
  t.same(
    workerExecArgv(['--enable-source-maps'], '', 8),
    ['--enable-source-maps', '--max-semi-space-size=8'],
    "beside the primary's own flags",
  );
  t.same(
    workerExecArgv(['--max-semi-space-size=32'], '', 4),
    ['--max-semi-space-size=32'],
    'a flag given to node wins',
  );
  t.same(
    workerExecArgv([], '--max-old-space-size=900 --max_semi_space_size=2', 4),
    [],
    'so does one in NODE_OPTIONS (the workers inherit it)',
  );
  t.same(workerExecArgv(['--inspect'], '', 0), ['--inspect'], '0 leaves V8 its own');

  const env = childEnv({
    DATABASE_URL: await testDatabase(t),
    REDIS_URL,
    REDIS_PREFIX: testRedisPrefix(t),
    WORKERS: '2',
    WORKER_SEMI_SPACE_MB: '3',
  });
  const serve = await startServe(t, env, 60_000);
  const workers = execFileSync('pgrep', ['-P', String(serve.proc.pid)])
    .toString()
    .trim()
    .split('\n');
  t.equal(workers.length, 2);
  for (const pid of workers) {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    t.ok(argv.includes('--max-semi-space-size=3'), `worker ${pid} runs with WORKER_SEMI_SPACE_MB`);
  }
  t.notOk(
    readFileSync(`/proc/${serve.proc.pid}/cmdline`, 'utf8').includes('semi-space'),
    'the primary is left as started',
  );
  const { code } = await serve.stop('SIGTERM');
  t.equal(code, 0);
});
