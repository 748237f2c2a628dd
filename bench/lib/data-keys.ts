// The key side of a year of data (issue 51): what a gateway process that has never seen the
// fixture's keys does when they all come at once. Three closed loops against a gateway in its
// own process (bench/lib/gateway.ts, on the filled database and a hot-store prefix of its own),
// so the load generator here never takes the gateway's CPU:
//   - a burst of new keys, many at once, each key once (keys of accounts nobody has used either);
//   - one key, for the throughput every other figure is a ratio of;
//   - distinct keys, a new one for every request, for as long as the one key ran.

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Sql } from 'postgres';
import { Pool } from 'undici';
import { startChild, stopAll } from './children.js';
import { GatewayProcess, gatewayEntry } from './gateway.js';
import { freePort } from './http.js';
import { cpuOfCommands } from './proc.js';
import { Samples, type Summary } from './stats.js';

const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface KeyLoad {
  /** What the run was. */
  what: string;
  connections: number;
  requests: number;
  /** Distinct keys presented. */
  keys: number;
  seconds: number;
  rps: number;
  latency: Summary;
  /** Answers other than 200, by status (or error message). */
  failures: Record<string, number>;
  /** CPU µs a request, by process (the gateway, Postgres, Redis, this load generator), when measured. */
  cpuUsPerRequest?: Record<string, number>;
  /** What the loop wrote to Postgres' WAL, a request, and the checkpoints during it, when measured. */
  wal?: { bytesPerRequest: number; fullPagesPerRequest: number; checkpoints: number };
  /** Redis commands a request (those scripts run included) and script calls a request, when measured. */
  redis?: { commandsPerRequest: number; scriptCallsPerRequest: number };
}

/** CPU seconds so far, by process: what a loop's requests cost each part of the machine. */
export type CpuClock = () => Record<string, number>;

/**
 * Postgres' WAL so far (pg_stat_wal) and its checkpoints: a key never seen writes index pages
 * at random places, and each page's first change after a checkpoint goes to the WAL whole.
 */
export type WalClock = () => Promise<{ bytes: number; fullPages: number; checkpoints: number }>;

const LSN = "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS bytes";

/** Redis' commands so far (INFO commandstats): the commands scripts run count as commands too. */
export type RedisClock = () => Promise<{ commands: number; scriptCalls: number }>;

/** Reads INFO commandstats of a connection's server: what a loop asked of Redis, a request. */
export function redisClock(info: () => Promise<string>): RedisClock {
  return async () => {
    let commands = 0;
    let scriptCalls = 0;
    for (const m of (await info()).matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) {
      if (['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'fcall'].includes(m[1]!)) scriptCalls += Number(m[2]);
      else if (m[1] !== 'info') commands += Number(m[2]);
    }
    return { commands, scriptCalls };
  };
}

/** The server's WAL clock, or none where it keeps no such statistics (before PostgreSQL 14). */
export async function walClock(sql: Sql): Promise<WalClock | undefined> {
  // The bytes from the WAL's position, which moves at once; pg_stat_wal's counts reach the view
  // up to a second after each backend's write. PostgreSQL 17 moved the checkpoint counts from
  // pg_stat_bgwriter to pg_stat_checkpointer.
  const queries = [
    `${LSN}, w.wal_fpi::float8 AS pages, (c.num_timed + c.num_requested)::float8 AS ckpts FROM pg_stat_wal w, pg_stat_checkpointer c`,
    `${LSN}, w.wal_fpi::float8 AS pages, (b.checkpoints_timed + b.checkpoints_req)::float8 AS ckpts FROM pg_stat_wal w, pg_stat_bgwriter b`,
  ];
  for (const q of queries) {
    const clock: WalClock = async () => {
      const [r] = await sql.unsafe<{ bytes: number; pages: number; ckpts: number }[]>(q);
      return { bytes: r!.bytes, fullPages: r!.pages, checkpoints: r!.ckpts };
    };
    try {
      await clock();
      return clock;
    } catch {
      // The next form, or none.
    }
  }
  return undefined;
}

/** The settings a write-heavy Postgres is tuned by (docs/api.md, "Postgres for a busy year"). */
export async function writePathSettings(sql: Sql): Promise<Record<string, string>> {
  const names = ['shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'wal_compression'];
  const rows = await sql<{ name: string; value: string }[]>`
    SELECT name, current_setting(name) AS value FROM pg_settings WHERE name = ANY(${names})`;
  return Object.fromEntries(rows.map((r) => [r.name, r.value]));
}

export interface KeyLoadOptions {
  url: string;
  what: string;
  connections: number;
  /** The secret of the i-th request; `keys` distinct ones in all. */
  secretOf: (i: number) => string;
  keys: number;
  /** Stop after this many requests (default: no count limit). */
  requests?: number;
  /** Stop after this long (default: no time limit). */
  seconds?: number;
  model: string;
  cpu?: CpuClock;
  wal?: WalClock;
  redis?: RedisClock;
}

/**
 * `connections` loops, each sending its next request when its last answer is read, until the
 * count or the time is up. Every answer must be a 200: a refusal is a failure, not a fast answer.
 */
export async function keyLoad(opts: KeyLoadOptions): Promise<KeyLoad> {
  const origin = new URL(opts.url).origin;
  const pool = new Pool(origin, {
    connections: opts.connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  });
  const body = JSON.stringify({
    model: opts.model,
    messages: [{ role: 'user', content: 'Say hello.' }],
    max_tokens: 16,
  });
  const limit = opts.requests ?? Number.MAX_SAFE_INTEGER;
  const latency = new Samples(Math.min(limit, 1 << 16));
  const failures: Record<string, number> = {};
  let next = 0;
  const walBefore = await opts.wal?.();
  const redisBefore = await opts.redis?.();
  const cpuBefore = opts.cpu?.();
  const start = performance.now();
  const deadline = opts.seconds === undefined ? Infinity : start + opts.seconds * 1000;
  const loop = async () => {
    while (next < limit && performance.now() < deadline) {
      const i = next++;
      const t = performance.now();
      let status: string;
      try {
        const res = await pool.request({
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { authorization: `Bearer ${opts.secretOf(i % opts.keys)}`, 'content-type': 'application/json' },
          body,
        });
        await res.body.dump({ limit: Infinity });
        status = String(res.statusCode);
      } catch (err) {
        status = (err as Error).message.slice(0, 80);
      }
      if (status === '200') latency.add(performance.now() - t);
      else failures[status] = (failures[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: opts.connections }, loop));
  const seconds = (performance.now() - start) / 1000;
  const cpuAfter = opts.cpu?.();
  const walAfter = await opts.wal?.();
  const redisAfter = await opts.redis?.();
  await pool.close();
  const cpuUsPerRequest =
    cpuBefore && cpuAfter && next > 0
      ? Object.fromEntries(
          Object.keys(cpuAfter).map((k) => [k, Math.round(((cpuAfter[k] - (cpuBefore[k] ?? 0)) * 1e6) / next)]),
        )
      : undefined;
  return {
    what: opts.what,
    connections: opts.connections,
    requests: next,
    keys: Math.min(next, opts.keys),
    seconds: Math.round(seconds * 1000) / 1000,
    // Answered requests only: a refusal is quick, and would pass for throughput.
    rps: Math.round(latency.count / seconds),
    latency: latency.summary(),
    failures,
    cpuUsPerRequest,
    wal:
      walBefore && walAfter && next > 0
        ? {
            bytesPerRequest: Math.round((walAfter.bytes - walBefore.bytes) / next),
            fullPagesPerRequest: Math.round(((walAfter.fullPages - walBefore.fullPages) / next) * 100) / 100,
            checkpoints: walAfter.checkpoints - walBefore.checkpoints,
          }
        : undefined,
    redis:
      redisBefore && redisAfter && next > 0
        ? {
            commandsPerRequest: Math.round(((redisAfter.commands - redisBefore.commands) / next) * 10) / 10,
            scriptCallsPerRequest: Math.round(((redisAfter.scriptCalls - redisBefore.scriptCalls) / next) * 100) / 100,
          }
        : undefined,
  };
}

/** The burst: new keys at once, each once, as a launch or a migration of customers brings them. */
export const BURST_KEYS = 5_000;
export const BURST_CONNECTIONS = 512;
/** The throughput loops: as wrk -c64 measured them in issue 51. */
export const LOOP_CONNECTIONS = 64;

export interface KeyRuns {
  burst: KeyLoad;
  one: KeyLoad;
  distinct: KeyLoad;
  /** distinct req/s ÷ one key's req/s: the target is ≥ 0.5. */
  ratio: number;
  /** The Postgres settings the write path's cost depends on, as the server reported them. */
  postgres?: Record<string, string>;
}

/**
 * The fixture's keys that nothing has presented yet (not `used`, no spend cap: a cap is counted
 * per request and would measure that instead), key 0 of every account first: the burst and the
 * distinct loop are then new accounts too, the coldest request there is.
 */
export function unusedKeys(
  users: number,
  keysPerUser: number,
  used: Set<number>,
  capOf: (n: number, j: number) => string | null,
): [number, number][] {
  const out: [number, number][] = [];
  for (let j = 0; j < keysPerUser; j++)
    for (let n = 2; n <= users; n++) if (!used.has(n) && capOf(n, j) === null) out.push([n, j]);
  return out;
}

/** The burst first (the process is coldest then), then one key, then distinct keys for as long. */
export async function timeKeys(opts: {
  url: string;
  model: string;
  fresh: string[];
  oneKey: string;
  seconds: number;
  progress: (line: string) => void;
  cpu?: CpuClock;
  wal?: WalClock;
  redis?: RedisClock;
}): Promise<KeyRuns> {
  const { url, model, fresh, cpu, wal, redis } = opts;
  const burstKeys = Math.min(BURST_KEYS, Math.floor(fresh.length / 2));
  const burst = await keyLoad({
    url,
    model,
    what: `burst: ${burstKeys.toLocaleString('en')} new keys of new accounts, ${BURST_CONNECTIONS} at once, each once`,
    connections: BURST_CONNECTIONS,
    keys: burstKeys,
    requests: burstKeys,
    secretOf: (i) => fresh[i]!,
  });
  opts.progress(`burst: p99 ${burst.latency.p99} ms, ${JSON.stringify(burst.failures)}`);
  // The one key warms the request path too; its own first second is not what is compared.
  await keyLoad({
    url,
    model,
    what: 'warm-up',
    connections: LOOP_CONNECTIONS,
    keys: 1,
    seconds: 2,
    secretOf: () => opts.oneKey,
  });
  const one = await keyLoad({
    url,
    model,
    what: `one key, ${LOOP_CONNECTIONS} connections`,
    connections: LOOP_CONNECTIONS,
    keys: 1,
    seconds: opts.seconds,
    secretOf: () => opts.oneKey,
    cpu,
    wal,
    redis,
  });
  opts.progress(`one key: ${one.rps} req/s`);
  const rest = fresh.slice(burstKeys);
  const distinct = await keyLoad({
    url,
    model,
    what: `a new key for every request (${rest.length.toLocaleString('en')} on hand), ${LOOP_CONNECTIONS} connections`,
    connections: LOOP_CONNECTIONS,
    keys: rest.length,
    requests: rest.length,
    seconds: opts.seconds,
    secretOf: (i) => rest[i]!,
    cpu,
    wal,
    redis,
  });
  opts.progress(`distinct keys: ${distinct.rps} req/s over ${distinct.keys.toLocaleString('en')} keys`);
  return { burst, one, distinct, ratio: Math.round((distinct.rps / Math.max(1, one.rps)) * 1000) / 1000 };
}

/**
 * A gateway of its own (one worker, `node dist/airouter.js serve`) on the filled database, with
 * the static upstream behind it (bench/upstream/static.ts: never the limit), for `run`.
 */
export async function withGatewayProcess<T>(
  opts: {
    dir: string;
    env: Record<string, string>;
    catalogue: (upstream: string) => object;
    profileDir?: string;
    progress: (line: string) => void;
  },
  run: (url: string, cpu: CpuClock) => Promise<T>,
): Promise<T> {
  try {
    const upstream = startChild({
      name: 'static upstream',
      command: process.execPath,
      args: ['--import', 'tsx', path.join(REPO_ROOT, 'bench/upstream/static.ts'), '--port', '0'],
      cwd: REPO_ROOT,
      logFile: path.join(opts.dir, 'static.log'),
    });
    const upstreamUrl = (await upstream.waitForLine(/^listening (\S+)/, 60_000))[1]!;
    const configPath = path.join(opts.dir, 'gateway-process.config.json');
    writeFileSync(configPath, JSON.stringify(opts.catalogue(upstreamUrl)));
    const entry = await gatewayEntry(REPO_ROOT);
    const gateway = new GatewayProcess(
      {
        dir: opts.dir,
        root: REPO_ROOT,
        entry: entry.file,
        env: { ...opts.env, GATEWAY_CONFIG: configPath, LOG_LEVEL: 'warn' },
        workers: 1,
        nodeArgs: opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.profileDir}`] : [],
        log: opts.progress,
      },
      await freePort(),
    );
    await gateway.start();
    try {
      // The gateway's process tree, the machine's Postgres and Redis, and this process (the load).
      const cpu: CpuClock = () => {
        const own = process.cpuUsage();
        return {
          gateway: gateway.sampler.sample(true).cpuSeconds,
          ...cpuOfCommands(['postgres', 'redis-server']),
          load: (own.user + own.system) / 1e6,
        };
      };
      return await run(gateway.url, cpu);
    } finally {
      // Stopping flushes its usage writer: reconcile then sees every charge.
      await gateway.stop();
    }
  } finally {
    await stopAll();
  }
}
