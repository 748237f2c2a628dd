// A worker that is alive but whose event loop answers nothing (here: SIGSTOP; in issue 30, a
// tokenizer stuck for minutes) never exits, so only the primary's heartbeat can tell: it must
// kill the worker and start another, and /healthz must be served by both again.

import t from 'tap';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { childEnv, startServe, waitFor } from '../helpers/child.js';
import { REDIS_URL, testDatabase, testRedisPrefix } from '../helpers/stores.js';

/** The primary's cluster workers (its children running the gateway). */
function workerPids(primary: number): number[] {
  let out = '';
  try {
    out = execFileSync('pgrep', ['-P', String(primary)]).toString();
  } catch {
    return [];
  }
  return out
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((pid) => {
      try {
        // A worker runs `node <the primary's script> serve`; a primary through tsx also has an esbuild child.
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('serve');
      } catch {
        return false;
      }
    });
}

/** Processes with a listening socket on `port` (SO_REUSEPORT: one per worker). */
function listeners(port: number): number[] {
  const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`]).toString();
  return [...new Set([...out.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1])))];
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** GET /healthz on a fresh connection (any worker may get it); its status, or 0 past `ms`. */
function healthz(url: string, ms: number): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(`${url}/healthz`, { agent: false, timeout: ms }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => {
      req.destroy();
      resolve(0);
    });
    req.on('error', () => resolve(0));
  });
}

t.test('the primary kills a worker that stops answering its heartbeat, and replaces it', async (t) => {
  const env = childEnv({
    DATABASE_URL: await testDatabase(t),
    REDIS_URL,
    REDIS_PREFIX: testRedisPrefix(t),
    WORKERS: '2',
    WORKER_HEARTBEAT_TIMEOUT_MS: '1500',
  });
  const serve = await startServe(t, env, 60_000);
  await waitFor(() => workerPids(serve.proc.pid!).length === 2, 20_000);
  const [frozen, other] = workerPids(serve.proc.pid!) as [number, number];
  // Past the timeout with both answering: a live worker is left alone.
  await new Promise((r) => setTimeout(r, 2500));
  t.same(workerPids(serve.proc.pid!).sort(), [frozen, other].sort(), 'two answering workers are left alone');

  process.kill(frozen, 'SIGSTOP');
  t.teardown(() => {
    if (alive(frozen)) process.kill(frozen, 'SIGKILL');
  });
  const started = Date.now();
  await waitFor(() => !alive(frozen), 15_000, 50);
  const killedAfter = Date.now() - started;
  t.ok(killedAfter >= 1000 && killedAfter < 10_000, `the frozen worker was killed ${killedAfter} ms after it froze`);
  t.ok(alive(other), 'the other worker lives on');
  t.ok(alive(serve.proc.pid!), 'and so does the primary');

  const replaced: number[] = await waitFor(
    () => {
      const pids = workerPids(serve.proc.pid!);
      return pids.length === 2 && !pids.includes(frozen) ? pids : undefined;
    },
    30_000,
    100,
  ).then((pids) => pids!);
  t.ok(replaced.includes(other), `a new worker beside the other (${replaced})`);
  // Until the new one listens the kernel gives the port to the other alone: wait for it to.
  const fresh = replaced.find((p) => p !== other)!;
  await waitFor(() => listeners(serve.port).includes(fresh), 30_000, 100);
  t.same(listeners(serve.port).sort(), replaced.sort(), 'both workers listen on the port');
  const statuses: number[] = [];
  for (let i = 0; i < 20; i++) statuses.push(await healthz(serve.url, 2000));
  t.same(statuses, Array(20).fill(200), 'every fresh connection gets its /healthz');
  t.equal((await serve.stop('SIGTERM')).code, 0, 'the gateway still stops cleanly');
});
