// Starts bench/upstream/bare-proxy.ts: the bare proxy (uWS and the gateway's upstream client,
// nothing else) and, with a ledger, the same doing the gateway's hot-store work per request.

import path from 'node:path';
import { startChild, type Child } from './children.js';
import { freePort } from './http.js';

const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface ProxyOptions {
  name: 'bare proxy' | 'ledger proxy';
  /** Where its log goes (`<name>.log`). */
  dir: string;
  processes: number;
  /** Path prefix → upstream origin, e.g. { '/s': static, '/f': fake }. */
  routes: Record<string, string>;
  /** Upstream connections each process keeps. */
  connections: number | string;
  /** The hot store its ledger works on (a Redis URL and key prefix), or 'memory'; none: the bare proxy. */
  ledger?: { redisUrl: string; prefix: string } | 'memory';
  /** Holds reserved per request rather than drawn from a lease. */
  noLease?: boolean;
  nodeArgs?: string[];
  nofile?: number;
}

export async function startProxy(o: ProxyOptions): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const ledger =
    o.ledger === undefined
      ? []
      : o.ledger === 'memory'
        ? ['--ledger', 'memory']
        : ['--ledger', o.ledger.redisUrl, '--ledger-prefix', o.ledger.prefix];
  const child = startChild({
    name: o.name,
    command: process.execPath,
    args: [
      ...(o.nodeArgs ?? []),
      '--import',
      'tsx',
      path.join(REPO_ROOT, 'bench/upstream/bare-proxy.ts'),
      '--port',
      String(port),
      '--processes',
      String(o.processes),
      ...Object.entries(o.routes).flatMap(([prefix, origin]) => ['--route', `${prefix}=${origin}`]),
      '--connections',
      String(o.connections),
      ...ledger,
      ...(o.noLease ? ['--ledger-no-lease'] : []),
    ],
    cwd: REPO_ROOT,
    logFile: path.join(o.dir, `${o.name.replace(' ', '-')}.log`),
    nofile: o.nofile,
  });
  await child.waitForLine(/^listening /, 60_000);
  return { child, url: `http://127.0.0.1:${port}` };
}
