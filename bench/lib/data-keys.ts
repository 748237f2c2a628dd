// The key side of a year of data (issue 51): what a gateway process that has never seen the
// fixture's keys does when they all come at once. Three closed loops against a gateway in its
// own process (bench/lib/gateway.ts, on the filled database and a hot-store prefix of its own),
// so the load generator here never takes the gateway's CPU:
//   - a burst of new keys, many at once, each key once (keys of accounts nobody has used either);
//   - one key, for the throughput every other figure is a ratio of;
//   - distinct keys, a new one for every request, for as long as the one key ran, the two
//     taking turns (key-load.ts).

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Sql } from 'postgres';
import { stopAll } from './children.js';
import { GatewayProcess, gatewayEntry } from './gateway.js';
import { freePort } from './http.js';
import { cpuOfCommands } from './proc.js';
import { startUpstream } from './servers.js';
import { keyLoad, KeyLoadRun, type CpuClock, type KeyLoad, type RedisClock, type WalClock } from './key-load.js';

export type { CpuClock, KeyLoad, RedisClock, WalClock } from './key-load.js';

const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');

const LSN = "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS bytes";

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
  /** The same, of each turn the two loops took (timeKeys). */
  turnRatios?: number[];
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

/** The one key and the distinct keys take turns in this many slices each (TURNS × 2 in all). */
export const TURNS = 3;

/**
 * The burst first (the process is coldest then), then the one key and distinct keys taking
 * turns, `seconds` each in all: a machine that slows down for a while slows both loops, where
 * one loop after the other put the whole slowdown into their ratio.
 */
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
    waves: true,
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
  const one = new KeyLoadRun({
    url,
    model,
    what: `one key, ${LOOP_CONNECTIONS} connections`,
    connections: LOOP_CONNECTIONS,
    keys: 1,
    secretOf: () => opts.oneKey,
    cpu,
    wal,
    redis,
  });
  const rest = fresh.slice(burstKeys);
  const distinct = new KeyLoadRun({
    url,
    model,
    what: `a new key for every request (${rest.length.toLocaleString('en')} on hand), ${LOOP_CONNECTIONS} connections`,
    connections: LOOP_CONNECTIONS,
    keys: rest.length,
    requests: rest.length,
    secretOf: (i) => rest[i]!,
    cpu,
    wal,
    redis,
  });
  for (let turn = 0; turn < TURNS; turn++) {
    await one.run(opts.seconds / TURNS);
    await distinct.run(opts.seconds / TURNS);
  }
  const runs = keyRuns(burst, one.result(), distinct.result());
  opts.progress(`one key: ${runs.one.rps} req/s`);
  opts.progress(`distinct keys: ${runs.distinct.rps} req/s over ${runs.distinct.keys.toLocaleString('en')} keys`);
  return runs;
}

/** The three loops, and how the distinct keys' throughput compares: in all, and turn by turn. */
export function keyRuns(burst: KeyLoad, one: KeyLoad, distinct: KeyLoad): KeyRuns {
  const ratioOf = (d: number, o: number) => Math.round((d / Math.max(1, o)) * 1000) / 1000;
  return {
    burst,
    one,
    distinct,
    ratio: ratioOf(distinct.rps, one.rps),
    turnRatios: distinct.sliceRps?.map((d, i) => ratioOf(d, one.sliceRps?.[i] ?? 0)),
  };
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
    const { url: upstreamUrl } = await startUpstream('static', opts.dir);
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
