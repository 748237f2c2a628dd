// The bench's setting up: the stores, both upstreams, the gateway with an account made through
// its CLI, nginx, the bare and ledger proxies, and one request down each path before any load.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fdLimitPrefix, runCommand } from '../lib/children.js';
import { createAccount, GatewayProcess, gatewayEntry, writeCatalogue } from '../lib/gateway.js';
import { fetchText, freePort, sleep } from '../lib/http.js';
import { findWrk } from '../lib/loadgen.js';
import { findNginx, startNginx, type NginxInfo, type NginxProxy } from '../lib/nginx.js';
import { UsageError, type Options } from '../lib/options.js';
import { procAvailable, rssByProcess, TreeSampler } from '../lib/proc.js';
import { prepareStores } from '../lib/stores.js';
import { startProxy, startUpstream } from '../lib/servers.js';
import { cleanups, METRICS_TOKEN, say, type Bench } from './context.js';
import { nonStreamTargets } from './targets.js';

export function ownFdLimit(): number {
  try {
    const m = /Max open files\s+(\d+|unlimited)/.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? (m[1] === 'unlimited' ? Infinity : Number(m[1])) : Infinity;
  } catch {
    return Infinity;
  }
}

export async function raiseOwnFdLimit(need: number): Promise<string> {
  const have = ownFdLimit();
  if (have >= need) return `bench process: ${have} (enough)`;
  const r = await runCommand('prlimit', [
    '--pid',
    String(process.pid),
    `--nofile=${Math.max(need, 65536)}:${Math.max(need, 65536)}`,
  ]).catch(() => null);
  const now = ownFdLimit();
  if (r?.code === 0 && now >= need) return `bench process: raised ${have} → ${now}`;
  return `bench process: ${have}, below the ${need} the largest stream level needs (raise with ulimit -n)`;
}

/**
 * Everything the scenarios run against, started and checked; `started` keeps what the report says
 * of how (the machine's load and limits, the gateway's command, nginx, the loaders).
 */
export async function setUp(opts: Options): Promise<{ b: Bench; started: Started }> {
  if (!existsSync(path.join(opts.gatewayRoot, 'src', 'bin.js')))
    throw new Error(`no gateway to bench: ${path.join(opts.gatewayRoot, 'src', 'bin.js')} does not exist`);
  const cores = availableParallelism();
  const loadBefore = loadavg()[0]!;
  if (loadBefore > cores * 0.5)
    say(
      `warning: load average ${loadBefore.toFixed(1)} on ${cores} cores before the run: other work on this machine will skew the figures`,
    );
  const tmp = mkdtempSync(path.join(tmpdir(), 'airouter-bench-'));
  const keepTemp = opts.keepTemp;
  cleanups.push(async () => {
    if (keepTemp) say(`temp dir kept: ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  });
  if (!procAvailable) say('no /proc: RSS and CPU figures will be missing');

  const maxLevel = opts.scenarios.some((s) => s === 'streams' || s === 'cross') ? Math.max(...opts.streamLevels) : 0;
  const fdNote = await raiseOwnFdLimit(Math.ceil(maxLevel * 1.1) + 512);
  const childFd = fdLimitPrefix(65536).length
    ? 'children raised to 65536 (prlimit)'
    : `children inherit ${ownFdLimit()}`;

  // Stores first: with the embedded store, the CLI must make the account before serve holds it.
  const stores = await prepareStores({
    databaseUrl: process.env.DATABASE_URL || undefined,
    redisUrl: process.env.REDIS_URL || undefined,
    adminUrl: process.env.BENCH_DATABASE_ADMIN_URL,
    dataDir: path.join(tmp, 'data'),
  });
  cleanups.push(() => stores.cleanup());
  const embedded = stores.kind.sql === 'embedded' || stores.kind.hot === 'embedded';
  const workers = embedded ? 1 : opts.workers;
  say(`${opts.quick ? 'quick' : 'full'} run; gateway on ${stores.description}`);
  say(
    `gateway workers: ${workers}${embedded && opts.workers > 1 ? ' (embedded stores allow one process; set DATABASE_URL and REDIS_URL for more)' : ''}; machine cores: ${cores}, shared by everything in this run`,
  );

  // Upstreams in their own processes, so their load never shares the gateway's event loop.
  const nofile = 65536;
  const [{ child: fakeChild, url: fake }, { child: staticChild, url: stat }] = await Promise.all([
    startUpstream('fake', tmp, nofile),
    startUpstream('static', tmp, nofile),
  ]);
  say(`fake upstream ${fake} (pid ${fakeChild.pid}), static upstream ${stat} (pid ${staticChild.pid})`);

  const catalogue = path.join(tmp, 'gateway.config.json');
  writeCatalogue(catalogue, { fake, static: stat });
  const maxPerWorker = Math.max(maxLevel, 1024) * 2;
  const gatewayEnv: Record<string, string> = {
    ...stores.env,
    GATEWAY_CONFIG: catalogue,
    LOG_LEVEL: 'warn',
    SHUTDOWN_TIMEOUT_MS: '3000',
    METRICS_TOKEN,
    // One upstream connection per concurrent stream: the default pool (1024) would queue the rest.
    UPSTREAM_CONNECTIONS: String(maxPerWorker),
  };
  const entry = await gatewayEntry(opts.gatewayRoot);
  const gwOpts = {
    dir: tmp,
    root: opts.gatewayRoot,
    entry: entry.file,
    env: gatewayEnv,
    workers,
    nodeArgs: [
      ...opts.gatewayNodeArgs,
      ...(opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.profileDir}`] : []),
    ],
    log: say,
  };
  if (opts.profileDir) mkdirSync(opts.profileDir, { recursive: true });
  const email = `bench-${Date.now().toString(36)}@bench.invalid`;
  say(`creating a funded account with the CLI (airouter user create / key create)`);
  const key = await createAccount(gwOpts, email);
  const gateway = new GatewayProcess(gwOpts, await freePort());
  cleanups.push(() => gateway.stop());
  await gateway.start();
  await sleep(500);
  const idleRss = rssByProcess(gateway.child.pid);
  say(
    `gateway ${gateway.url} (pid ${gateway.child.pid}; idle RSS ${idleRss.map((p) => `${p.rss_mb}`).join(' + ')} MB, PSS ${idleRss.map((p) => `${p.pss_mb}`).join(' + ')} MB)`,
  );

  let nginx: NginxProxy | null = null;
  let nginxSkipped: string | null = null;
  let nginxInfo: NginxInfo | null = null;
  if (!opts.nginx) nginxSkipped = 'disabled (--no-nginx)';
  else {
    nginxInfo = findNginx();
    if (!nginxInfo) {
      nginxSkipped = 'nginx not installed';
      say(
        'nginx is not installed: the nginx baseline is skipped. To include it: apt-get install -y nginx (or put nginx on PATH / set NGINX_BIN).',
      );
    } else {
      try {
        nginx = await startNginx({
          info: nginxInfo,
          dir: tmp,
          workers,
          servers: {
            static_up: { upstream: stat, port: await freePort() },
            fake_up: { upstream: fake, port: await freePort() },
          },
        });
        say(
          `${nginxInfo.version} (pid ${nginx.child.pid}, ${workers} worker process${workers > 1 ? 'es' : ''}) in front of both upstreams`,
        );
      } catch (err) {
        nginxSkipped = `nginx failed to start: ${(err as Error).message.split('\n')[0]}`;
        say(nginxSkipped);
      }
    }
  }

  // The bare proxy, as many processes as the gateway has workers, on one port.
  const routes = { '/s': stat, '/f': fake };
  const { child: bareChild, url: bare } = await startProxy({
    name: 'bare proxy',
    dir: tmp,
    processes: workers,
    routes,
    connections: maxPerWorker,
    nofile,
  });
  say(
    `bare proxy (uWS + the gateway's upstream client, no gateway work) ${bare}, ${workers} process${workers > 1 ? 'es' : ''}`,
  );
  // The same, plus the gateway's hot-store work per request, on the hot store the gateway has,
  // with the same holds as the gateway's: from leases unless it runs without them. Stopped before
  // the stores are cleaned up: its outbox reader would make its stream again.
  const { child: ledgerChild, url: ledger } = await startProxy({
    name: 'ledger proxy',
    dir: tmp,
    processes: workers,
    routes,
    connections: maxPerWorker,
    ledger: stores.env.REDIS_URL
      ? { redisUrl: stores.env.REDIS_URL, prefix: `${stores.env.REDIS_PREFIX}ledger:` }
      : 'memory',
    noLease: process.env.LEASE_WINDOW_MS === '0',
    // With --profile the ledger proxy is profiled too (DIR/ledger): the floor the gateway's profile is read against.
    nodeArgs: opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(opts.profileDir, 'ledger')}`] : [],
    nofile,
  });
  cleanups.push(() => ledgerChild.stop());
  say(
    `ledger proxy (the bare proxy + the hot store's reserve, settle and outbox rounds, ${stores.env.REDIS_URL ? 'on Redis' : 'in process'}) ${ledger}`,
  );

  let wrk = null as Bench['wrk'];
  if (opts.loadgen !== 'autocannon') {
    wrk = findWrk();
    if (!wrk && opts.loadgen === 'wrk') throw new UsageError('--loadgen wrk: wrk is not installed');
    if (!wrk) say('wrk not installed: using autocannon (millisecond latency resolution) for the closed-loop runs');
  }

  const b: Bench = {
    opts,
    tmp,
    stores,
    workers,
    gateway,
    key,
    fake,
    static: stat,
    fakeChild,
    fakeSampler: new TreeSampler(fakeChild.pid),
    nginx,
    nginxSampler: nginx ? new TreeSampler(nginx.child.pid) : null,
    nginxSkipped,
    bare,
    bareSampler: new TreeSampler(bareChild.pid),
    ledger,
    ledgerSampler: new TreeSampler(ledgerChild.pid),
    wrk,
    saturationRps: null,
  };

  // One request down each path before any load: a broken setup fails here, with the answer.
  for (const [name, t] of nonStreamTargets(b).map((t) => [t.name, t.target] as const)) {
    if (!t) continue;
    const r = await fetchText(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...t.headers },
      body: t.body,
    });
    if (r.status !== 200) throw new Error(`preflight: ${name} answered ${r.status}: ${r.text.slice(0, 300)}`);
  }
  return {
    b,
    started: {
      cores,
      loadBefore,
      fdNote,
      childFd,
      embedded,
      gatewayEnv,
      entry,
      idleRss,
      staticPid: staticChild.pid,
      nginxInfo,
    },
  };
}

/** What the report says of how the run was set up, beside what Bench carries. */
export interface Started {
  cores: number;
  loadBefore: number;
  fdNote: string;
  childFd: string;
  embedded: boolean;
  gatewayEnv: Record<string, string>;
  entry: { file: string; command: string };
  idleRss: ReturnType<typeof rssByProcess>;
  staticPid: number;
  nginxInfo: NginxInfo | null;
}
