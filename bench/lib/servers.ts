// The processes a bench puts around the gateway, each in its own process so that its load never
// shares the gateway's event loop: the upstreams it answers from (test/fake-upstream, scripted and
// paced; bench/upstream/static.ts, one canned answer at uWS speed) and the proxies it is compared
// with (bench/upstream/bare-proxy.ts: uWS and the gateway's upstream client, nothing else, and
// with a ledger the same doing the gateway's hot-store work per request).

import path from 'node:path';
import { startChild, type Child } from './children.js';
import { freePort } from './http.js';

const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');

const UPSTREAMS = {
  fake: ['test/fake-upstream/main.ts', '--port', '0', '--no-record'],
  static: ['bench/upstream/static.ts', '--port', '0'],
};

/** An upstream on a free port; its log goes to `<dir>/<kind>-upstream.log`. */
export async function startUpstream(
  kind: keyof typeof UPSTREAMS,
  dir: string,
  nofile?: number,
): Promise<{ child: Child; url: string }> {
  const [script, ...args] = UPSTREAMS[kind];
  const child = startChild({
    name: `${kind} upstream`,
    command: process.execPath,
    args: ['--import', 'tsx', path.join(REPO_ROOT, script!), ...args],
    cwd: REPO_ROOT,
    logFile: path.join(dir, `${kind}-upstream.log`),
    nofile,
  });
  return { child, url: (await child.waitForLine(/^listening (\S+)/, 60_000))[1]! };
}

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
