// A Redis server of the test's own (a free port, a temporary directory), so that a test may
// restart it, kill it or flush it without touching the shared one. With `aof`, it keeps an
// append-only file synced every second, the persistence the gateway expects in production.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './child.js';

export interface RedisServer {
  port: number;
  url: string;
  /** Stops it: `kill` is SIGKILL (no final fsync), otherwise SHUTDOWN as an operator would. */
  stop(how?: 'kill' | 'shutdown'): Promise<void>;
  start(): Promise<void>;
  /** A client of its own, for checks and for FLUSHALL. */
  client(): Redis;
  close(): Promise<void>;
}

export async function startRedisServer(opts: { aof?: boolean } = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'airouter-redis-'));
  let proc: ChildProcess | undefined;
  const clients: Redis[] = [];
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    ...(opts.aof ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no']),
  ];

  const ready = async () => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const probe = new Redis(port, '127.0.0.1', {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      probe.on('error', () => {});
      try {
        await probe.connect();
        // With AOF, "loading" answers errors until the file is replayed.
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        probe.disconnect();
        if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not start`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };

  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      proc = spawn('redis-server', args, { stdio: 'ignore' });
      await ready();
    },
    async stop(how = 'shutdown') {
      const p = proc;
      if (!p || p.exitCode !== null) return;
      const exited = new Promise((r) => p.once('exit', r));
      if (how === 'kill') p.kill('SIGKILL');
      else p.kill('SIGTERM'); // redis-server shuts down cleanly on SIGTERM, fsyncing the AOF
      await exited;
    },
    client() {
      const c = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 });
      c.on('error', () => {});
      clients.push(c);
      return c;
    },
    async close() {
      for (const c of clients) c.disconnect();
      await server.stop('kill');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
