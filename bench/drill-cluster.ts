// `npm run drill:cluster` (issue 50): the gateway scaled out, built on one machine and broken
// under load. A Redis Cluster of 3 masters and 3 replicas; 3 gateway hosts, each `airouter
// serve` in a network namespace of its own (ip netns, a veth on one bridge), behind HAProxy;
// one Postgres; many users with small balances sending streamed and plain requests through
// the balancer. During the load: kill -9 a Redis master (its replica takes over), cut a gateway
// host off the network and bring it back, restart Postgres, revoke a key on one host. After:
// every answered request has its record, none twice, nothing served past a balance or below
// zero, no answer for the revoked key a second after, and `reconcile` exact. It prints its
// figures as a table (the README quotes it) and exits 1 if any of that fails.
//
// Needs root (namespaces), iproute2, HAProxy, redis-server and a Postgres at
// BENCH_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres) that
// `pg_ctlcluster` can restart. Nothing of it is left behind.

import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { createKey, KeyResolver } from '../src/accounts/keys.js';
import { createVerifiedUser, creditUser } from '../src/accounts/users.js';
import { usdToNano } from '../src/billing/money.js';
import { reconcile } from '../src/billing/reconcile.js';
import { RedisHotStore } from '../src/store/hot-redis.js';
import { migrate } from '../src/store/migrate.js';
import type { Sql } from '../src/store/sql.js';
import { startFakeUpstream } from '../test/fake-upstream/server.js';
import { childEnv } from '../test/helpers/child.js';
import { testCatalogue } from '../test/helpers/gateway.js';
import { startRedisCluster } from '../test/helpers/redis-cluster.js';
import { startTcpProxy } from '../test/helpers/tcp-proxy.js';
import { gatewayEntry } from './lib/gateway.js';

const REPO_ROOT = path.resolve(import.meta.dirname, '..');
const ADMIN_URL = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NET = '10.77.0';
const HOST_IP = `${NET}.1`;
const BRIDGE = 'arbr0';
const HOSTS = 3;
const USERS = 40;
const CONCURRENCY = 96;
const KINDS = ['chat', 'chat-stream', 'messages-stream'] as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) =>
  process.stderr.write(`[drill ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${line}\n`);
const t0 = Date.now();
const sh = (cmd: string, ...args: string[]) =>
  execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const quietly = (cmd: string, ...args: string[]) => spawnSync(cmd, args, { stdio: 'ignore' });

function preflight(): void {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push('root (network namespaces)');
  for (const cmd of ['ip', 'haproxy', 'redis-server', 'redis-cli', 'pg_ctlcluster'])
    if (quietly('which', cmd).status !== 0) missing.push(cmd);
  if (missing.length > 0) {
    process.stderr.write(
      `drill:cluster needs ${missing.join(', ')} (apt-get install iproute2 haproxy redis-server postgresql)\n`,
    );
    process.exit(2);
  }
}

const cleanups: (() => unknown)[] = [];
async function cleanUp(): Promise<void> {
  for (const fn of cleanups.reverse())
    await Promise.resolve()
      .then(fn)
      .catch(() => {});
}

/** The bridge, and a namespace per gateway host with its end of a veth on it. */
function buildNetwork(): string[] {
  const ns = Array.from({ length: HOSTS }, (_, i) => `ar-gw${i + 1}`);
  const tearDown = () => {
    for (const n of ns) quietly('ip', 'netns', 'del', n);
    quietly('ip', 'link', 'del', BRIDGE);
  };
  tearDown(); // what an earlier run that was killed left
  cleanups.push(tearDown);
  sh('ip', 'link', 'add', BRIDGE, 'type', 'bridge');
  sh('ip', 'addr', 'add', `${HOST_IP}/24`, 'dev', BRIDGE);
  sh('ip', 'link', 'set', BRIDGE, 'up');
  ns.forEach((n, i) => {
    sh('ip', 'netns', 'add', n);
    sh('ip', 'link', 'add', `ar-v${i + 1}`, 'type', 'veth', 'peer', 'name', `ar-p${i + 1}`);
    sh('ip', 'link', 'set', `ar-p${i + 1}`, 'netns', n);
    sh('ip', 'link', 'set', `ar-v${i + 1}`, 'master', BRIDGE, 'up');
    sh('ip', 'netns', 'exec', n, 'ip', 'addr', 'add', `${hostIp(i)}/24`, 'dev', `ar-p${i + 1}`);
    sh('ip', 'netns', 'exec', n, 'ip', 'link', 'set', `ar-p${i + 1}`, 'up');
    sh('ip', 'netns', 'exec', n, 'ip', 'link', 'set', 'lo', 'up');
  });
  return ns;
}
const hostIp = (i: number) => `${NET}.${11 + i}`;
/** Cut a host off (its link on the bridge down) or bring it back. */
const link = (i: number, up: boolean) => sh('ip', 'link', 'set', `ar-v${i + 1}`, up ? 'up' : 'down');

interface Outcome {
  id: string;
  user: number;
  startedAt: number;
  status: number;
  complete: boolean;
}

/** Closed loops through the balancer, each request for the next user, until stopped. */
function startLoad(url: string, keys: string[]) {
  const outcomes: Outcome[] = [];
  const samples: string[] = [];
  let running = true;
  let seq = 0;
  const loop = async (w: number) => {
    while (running) {
      const n = seq++;
      const user = n % keys.length;
      const kind = KINDS[(w + n) % KINDS.length]!;
      const o: Outcome = { id: `drill-${n}`, user, startedAt: Date.now(), status: 0, complete: false };
      outcomes.push(o);
      const messages = kind === 'messages-stream';
      try {
        const res = await fetch(`${url}${messages ? '/v1/messages' : '/v1/chat/completions'}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-request-id': o.id,
            ...(messages ? { 'x-api-key': keys[user]! } : { authorization: `Bearer ${keys[user]}` }),
          },
          body: JSON.stringify({
            model: messages ? 'an-model' : 'oa-model',
            max_tokens: 100,
            stream: kind !== 'chat',
            messages: [{ role: 'user', content: `drill ${o.id} [[paced:12:5]]` }],
          }),
          signal: AbortSignal.timeout(30_000),
        });
        o.status = res.status;
        const text = await res.text();
        if (res.status !== 200 && res.status !== 402 && samples.length < 5)
          samples.push(`${res.status} ${text.slice(0, 200)}`);
        if (res.status === 200)
          o.complete =
            kind === 'chat'
              ? text.includes('"choices"')
              : kind === 'chat-stream'
                ? text.includes('data: [DONE]')
                : text.includes('event: message_stop');
      } catch {
        o.status = -1;
      }
      if (!o.complete) await sleep(50);
    }
  };
  const loops = Array.from({ length: CONCURRENCY }, (_, w) => loop(w));
  return {
    outcomes,
    samples,
    async stop() {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

async function waitReady(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > until) throw new Error(`${url} was not ready within ${timeoutMs} ms`);
    await sleep(200);
  }
}

async function main(): Promise<number> {
  preflight();
  const dir = mkdtempSync(path.join(tmpdir(), 'airouter-drill-cluster-'));
  // DRILL_KEEP=1 keeps the hosts' logs, HAProxy's and the nodes' folders for a look afterwards.
  if (!process.env.DRILL_KEEP) cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  else log(`logs in ${dir}`);
  const ns = buildNetwork();
  log(`network: bridge ${BRIDGE} ${HOST_IP}, hosts ${ns.map((n, i) => `${n} ${hostIp(i)}`).join(', ')}`);

  const cluster = await startRedisCluster({
    masters: 3,
    replicasPerMaster: 1,
    bind: HOST_IP,
    nodeTimeoutMs: 2000,
    dir: path.join(dir, 'redis'),
  });
  cleanups.push(() => cluster.stop());
  const seeds = cluster.seeds.split(',');
  log(`Redis Cluster: ${cluster.nodes.map((n) => `${n.port} ${n.role}`).join(', ')}`);

  const dbName = `airouter_drill_cluster_${randomUUID().slice(0, 8)}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  cleanups.push(async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  });
  const direct = new URL(ADMIN_URL);
  direct.pathname = `/${dbName}`;
  const sql = postgres(direct.toString(), {
    max: 4,
    onnotice: () => {},
    types: { bigint: postgres.BigInt },
  }) as unknown as Sql;
  cleanups.push(() => sql.end({ timeout: 1 }));
  await migrate(sql);
  // The hosts reach Postgres and the upstream on the bridge's address.
  const pg = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) }, { host: HOST_IP });
  cleanups.push(() => pg.close());
  const fake = await startFakeUpstream({ host: HOST_IP, record: false });
  cleanups.push(() => fake.close());
  const configPath = path.join(dir, 'gateway.config.json');
  writeFileSync(configPath, JSON.stringify(testCatalogue({ upstream: fake.url })));

  const prefix = 'ar:';
  const hot = new RedisHotStore(seeds, prefix);
  cleanups.push(() => hot.close());
  // Half the users can pay for a few dozen requests only: they run dry during the drill.
  const credits = Array.from({ length: USERS }, (_, i) => usdToNano(i % 2 === 0 ? '0.002' : '0.05'));
  const users = await Promise.all(
    credits.map(async (credit, i) => {
      const u = await createVerifiedUser(sql, `drill-${i}-${dbName}@example.test`);
      await creditUser(sql, hot, u.id, credit, { method: 'operator', amount: String(credit), currency: 'USD' });
      const key = await createKey(sql, u.id, 'drill');
      return { id: u.id, key: key.key, keyId: key.id };
    }),
  );

  const entry = await gatewayEntry(REPO_ROOT);
  const viaBridge = new URL(direct.toString());
  viaBridge.hostname = HOST_IP;
  viaBridge.port = String(pg.port);
  // Each host runs its gateway under a supervisor, as systemd's Restart=always would: a gateway
  // process that exits is started again (a Postgres restart can kill one, see the README).
  let supervising = true;
  const restarts: string[] = [];
  const gateways: ChildProcess[] = [];
  const startHost = (i: number): void => {
    const n = ns[i]!;
    const out = openSync(path.join(dir, `${n}.log`), 'a');
    const child = spawn('ip', ['netns', 'exec', n, process.execPath, entry.file, 'serve'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', out, out],
      env: childEnv({
        PORT: '8080',
        HOST: '0.0.0.0',
        WORKERS: '2',
        LOG_LEVEL: 'warn',
        DATA_DIR: path.join(dir, `data-${i}`),
        DATABASE_URL: viaBridge.toString(),
        REDIS_CLUSTER_NODES: seeds.join(','),
        REDIS_PREFIX: prefix,
        GATEWAY_CONFIG: configPath,
        FAKE_OPENAI_KEY: 'sk-fake',
        FAKE_ANTHROPIC_KEY: 'sk-ant-fake',
        USAGE_FLUSH_MS: '20',
        USAGE_FLUSH_MAX_MS: '50',
        REDIS_TIMEOUT_MS: '1000',
        SETTLE_WAIT_MS: '8000',
        SHUTDOWN_TIMEOUT_MS: '5000',
      }),
    });
    gateways[i] = child;
    child.once('exit', (code, signal) => {
      if (!supervising) return;
      restarts.push(`${n} (${signal ?? code})`);
      log(`${n}'s gateway exited (${signal ?? code}): started again`);
      setTimeout(() => supervising && startHost(i), 500);
    });
  };
  ns.forEach((_, i) => startHost(i));
  cleanups.push(async () => {
    supervising = false;
    for (const g of gateways) g.kill('SIGTERM');
    await sleep(3000);
    for (const g of gateways) if (g.exitCode === null) g.kill('SIGKILL');
  });
  await Promise.all(ns.map((_, i) => waitReady(`http://${hostIp(i)}:8080`, 60_000)));
  log(`${HOSTS} gateway hosts ready (2 workers each)`);

  const lbPort = 18000 + Math.floor(Math.random() * 1000);
  const haproxyCfg = path.join(dir, 'haproxy.cfg');
  writeFileSync(
    haproxyCfg,
    [
      'global',
      '  maxconn 4096',
      'defaults',
      '  mode http',
      '  timeout connect 1s',
      '  timeout client 60s',
      '  timeout server 60s',
      // Only a request that never reached a host is sent to another: one that did may be charged.
      '  retries 2',
      '  option redispatch',
      '  retry-on conn-failure',
      'frontend gateways',
      `  bind 127.0.0.1:${lbPort}`,
      '  default_backend hosts',
      'backend hosts',
      '  balance roundrobin',
      '  option httpchk',
      '  http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host gateway',
      '  default-server inter 500ms fall 2 rise 2',
      ...ns.map((n, i) => `  server ${n} ${hostIp(i)}:8080 check`),
      '',
    ].join('\n'),
  );
  const lb = spawn('haproxy', ['-f', haproxyCfg, '-db'], {
    stdio: ['ignore', openSync(path.join(dir, 'haproxy.log'), 'a'), openSync(path.join(dir, 'haproxy.log'), 'a')],
  });
  cleanups.push(() => lb.kill('SIGKILL'));
  const lbUrl = `http://127.0.0.1:${lbPort}`;
  await waitReady(lbUrl, 10_000);
  log(`HAProxy on ${lbUrl}`);

  const load = startLoad(
    lbUrl,
    users.map((u) => u.key),
  );
  const events: Record<string, number | string> = {};
  await sleep(5000);

  const victim = cluster.nodes.find((n) => n.role === 'master')!.port;
  log(`kill -9 Redis master ${victim}`);
  await cluster.kill(victim);
  const killedAt = Date.now();
  await cluster.waitHealthy(30_000);
  events.failoverMs = Date.now() - killedAt;
  log(`failed over in ${events.failoverMs} ms`);
  await sleep(3000);

  log(`cut ${ns[1]} off the network for 6 s`);
  link(1, false);
  await sleep(6000);
  link(1, true);
  await sleep(4000);

  log('restart Postgres');
  const pgVersion = readdirSync('/etc/postgresql')[0]!;
  const pgAt = Date.now();
  sh('pg_ctlcluster', '--skip-systemctl-redirect', pgVersion, 'main', 'restart');
  events.postgresRestartMs = Date.now() - pgAt;
  await sleep(3000);

  // A key revoked on one host's stores: every host refuses it within a second.
  const revoked = users.findIndex((_, i) => i % 2 === 1);
  await new KeyResolver(sql, hot, 60_000).revoke(users[revoked]!.id, users[revoked]!.keyId);
  const revokedAt = Date.now();
  log(`revoked the key of user ${revoked}`);
  await sleep(5000);

  const outcomes = await load.stop();
  log(`load stopped: ${outcomes.length} requests`);
  for (const line of load.samples) log(`a refusal: ${line}`);

  // The writers have their chance, and the hosts' retries theirs, before the books are read.
  const answered = outcomes.filter((o) => o.status === 200 && o.complete);
  const begun = outcomes.filter((o) => o.status === 200 && !o.complete);
  const count = async () =>
    new Map(
      (
        await sql<
          { request_id: string; n: number }[]
        >`SELECT request_id, count(*)::int AS n FROM usage_records WHERE request_id LIKE 'drill-%' GROUP BY request_id`
      ).map((r) => [r.request_id, r.n]),
    );
  let recorded = await count();
  for (const until = Date.now() + 60_000; Date.now() < until; await sleep(500)) {
    recorded = await count();
    if (answered.every((o) => recorded.has(o.id)) && (await hot.outboxLength()) === 0) break;
  }
  const report = await reconcile(sql, hot);
  const balances = await sql<
    { id: string; balance_nano: bigint }[]
  >`SELECT id, balance_nano FROM users WHERE id = ANY(${users.map((u) => u.id)}::uuid[])`;
  const spent = await sql<
    { user_id: string; s: bigint }[]
  >`SELECT user_id, sum(cost_nano)::bigint AS s FROM usage_records WHERE user_id = ANY(${users.map((u) => u.id)}::uuid[]) GROUP BY user_id`;
  const overspent = spent.filter((r) => r.s > credits[users.findIndex((u) => u.id === r.user_id)]!).length;
  const statuses: Record<string, number> = {};
  for (const o of outcomes) statuses[o.status] = (statuses[o.status] ?? 0) + 1;
  const afterRevoke = answered.filter((o) => o.user === revoked && o.startedAt > revokedAt + 1000).length;

  const figures = {
    requests: outcomes.length,
    answered: answered.length,
    recorded: answered.filter((o) => recorded.has(o.id)).length,
    'served beyond charged': answered.filter((o) => !recorded.has(o.id)).length,
    'charged twice': [...recorded.values()].filter((n) => n > 1).length,
    'streams cut, billed': begun.filter((o) => recorded.has(o.id)).length,
    'balances below zero': balances.filter((b) => b.balance_nano < 0n).length,
    'users charged past their credit': overspent,
    'answers for the revoked key after 1 s': afterRevoke,
    reconcile: report.ok ? 'exact' : `${report.mismatches.length} + ${report.hotMismatches.length} mismatches`,
    'failover (ms)': events.failoverMs!,
    'Postgres restart (ms)': events.postgresRestartMs!,
    'gateway processes restarted by their supervisor': restarts.length === 0 ? 'none' : restarts.join(', '),
    statuses: Object.entries(statuses)
      .map(([s, n]) => `${s === '-1' ? 'no answer' : s}: ${n}`)
      .join(', '),
  };
  process.stdout.write(
    `| figure | value |\n|---|---|\n${Object.entries(figures)
      .map(([k, v]) => `| ${k} | ${typeof v === 'number' ? v.toLocaleString('en') : v} |`)
      .join('\n')}\n`,
  );
  const failed =
    figures['served beyond charged'] > 0 ||
    figures['charged twice'] > 0 ||
    figures['balances below zero'] > 0 ||
    overspent > 0 ||
    afterRevoke > 0 ||
    !report.ok ||
    answered.length === 0;
  if (failed)
    process.stderr.write(
      `drill failed${process.env.DRILL_KEEP ? `; logs in ${dir}` : ' (DRILL_KEEP=1 keeps its logs)'}\n`,
    );
  return failed ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  process.stderr.write(`drill:cluster failed: ${(err as Error).stack ?? err}\n`);
} finally {
  await cleanUp();
}
process.exit(code);
