// Command-line flags (with BENCH_* environment equivalents) and the two presets: full, and
// --quick (what CI runs: small, a few seconds per scenario, under a minute in all).

import { availableParallelism } from 'node:os';
import path from 'node:path';

export const SCENARIOS = ['throughput', 'latency', 'streams', 'cross', 'slow'] as const;
export type ScenarioId = (typeof SCENARIOS)[number];

export interface Options {
  quick: boolean;
  scenarios: ScenarioId[];
  /** Seconds measured per target in the non-stream scenarios. */
  durationS: number;
  warmupS: number;
  /** Connections of the closed-loop throughput run. */
  concurrency: number;
  /** Offered rate of the latency scenario; null = half the gateway's measured saturation. */
  rate: number | null;
  streamLevels: number[];
  tokensPerStream: number;
  /** Prompt size of each stream's request, KB (0: a one-line prompt). */
  promptKb: number;
  /** Streams opened per second while ramping up to a level. */
  rampPerSecond: number;
  /** Gap between tokens; null = derived from the level (about 10,000 tokens/s in all). */
  tokenIntervalMs: number | null;
  slowReaders: number;
  slowAnswerKb: number;
  slowHoldMs: number;
  slowBytesPerSecond: number;
  workers: number;
  loadgen: 'auto' | 'wrk' | 'autocannon';
  wrkThreads: number;
  nginx: boolean;
  out: string | null;
  gatewayRoot: string;
  profileDir: string | null;
  /** Extra node flags for the gateway's processes (e.g. V8 heap sizes), split on spaces. */
  gatewayNodeArgs: string[];
  keepTemp: boolean;
  /** The stream scenarios' targets, in the report's order (default all). */
  streamTargets: string[];
}

export const STREAM_TARGETS = ['direct', 'nginx', 'bare', 'ledger', 'gateway'] as const;

const HELP = `npm run bench -- [flags]

  --quick                   CI preset: small concurrency, ~1 s per measurement, 200 streams; < 60 s
  --scenarios LIST          comma list of ${SCENARIOS.join(',')} (default all)     BENCH_SCENARIOS
  --duration S              seconds measured per target, non-stream scenarios        BENCH_DURATION
  --warmup S                seconds of warm-up before each of those; the stream scenarios open
                            S × ramp-per-s streams (at most a level) before a target's first level,
                            not measured (--quick: the gateway's only)              BENCH_WARMUP
  --concurrency N           connections of the throughput run                        BENCH_CONCURRENCY
  --rate RPS                offered rate of the latency run (default: half saturation) BENCH_RATE
  --streams LIST            concurrent stream levels, e.g. 1000,10000                BENCH_STREAMS
  --stream-targets LIST     the stream scenarios' targets, e.g. ledger,gateway (default all) BENCH_STREAM_TARGETS
  --tokens N                tokens per stream                                        BENCH_TOKENS
  --token-interval-ms MS    gap between tokens (default: level/10, so ~10k tokens/s) BENCH_TOKEN_INTERVAL_MS
  --prompt-kb N             prompt size of each stream, KB (default 0: one line)     BENCH_PROMPT_KB
  --ramp-per-s N            streams opened per second on the way up to a level       BENCH_RAMP_PER_S
  --slow-readers N          concurrent slow readers                                  BENCH_SLOW_READERS
  --slow-kb N               size of each slow reader's answer, KB                    BENCH_SLOW_KB
  --workers N|auto          gateway workers (default: WORKERS, else auto = cores)    WORKERS
  --loadgen auto|wrk|autocannon   closed-loop load generator (auto: wrk if installed) BENCH_LOADGEN
  --wrk-threads N           wrk threads (default 1: the load generator shares the cores) BENCH_WRK_THREADS
  --no-nginx                skip the nginx baseline                                  BENCH_NGINX=0
  --out PATH                report path without extension (default bench/reports/<timestamp>) BENCH_OUT
  --gateway-dir DIR         checkout to bench (default: this one)                    BENCH_GATEWAY_DIR
  --profile DIR             run the gateway (and the ledger proxy, DIR/ledger) with --cpu-prof BENCH_PROFILE_DIR
  --gateway-node-args ARGS  node flags for the gateway, e.g. "--max-semi-space-size=4" BENCH_GATEWAY_NODE_ARGS
  --keep-temp               keep the temp dir (logs, nginx.conf, catalogue)
  --help

Stores: with DATABASE_URL and REDIS_URL set, the gateway runs on them (the bench creates and
drops its own database, and uses its own Redis key prefix); otherwise on the embedded stores,
which allow one worker only.`;

export class UsageError extends Error {}

function parseList(v: string, name: string): number[] {
  const out = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
  if (out.length === 0 || out.some((n) => !Number.isInteger(n) || n <= 0))
    throw new UsageError(`${name} must be a comma list of positive whole numbers (got ${JSON.stringify(v)})`);
  return out;
}

function num(v: string, name: string, min: number, integer = true): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n)))
    throw new UsageError(`${name} must be a ${integer ? 'whole ' : ''}number ≥ ${min} (got ${JSON.stringify(v)})`);
  return n;
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv, repoRoot: string): Options | 'help' {
  const flags = new Map<string, string>();
  const booleans = new Set(['quick', 'no-nginx', 'keep-temp', 'help']);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new UsageError(`unexpected argument ${JSON.stringify(a)} (see --help)`);
    const eq = a.indexOf('=');
    const name = eq === -1 ? a.slice(2) : a.slice(2, eq);
    if (booleans.has(name)) {
      flags.set(name, 'true');
      continue;
    }
    const value = eq === -1 ? argv[++i] : a.slice(eq + 1);
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    flags.set(name, value);
  }
  if (flags.has('help')) return 'help';
  const known = new Set([
    'quick',
    'scenarios',
    'duration',
    'warmup',
    'concurrency',
    'rate',
    'streams',
    'tokens',
    'token-interval-ms',
    'prompt-kb',
    'ramp-per-s',
    'slow-readers',
    'slow-kb',
    'workers',
    'loadgen',
    'wrk-threads',
    'no-nginx',
    'out',
    'gateway-dir',
    'profile',
    'gateway-node-args',
    'keep-temp',
    'stream-targets',
  ]);
  for (const k of flags.keys()) if (!known.has(k)) throw new UsageError(`unknown flag --${k} (see --help)`);

  const get = (flag: string, envName: string): string | undefined => {
    const v = flags.get(flag) ?? env[envName];
    return v === '' ? undefined : v;
  };
  const quick = flags.has('quick') || env.BENCH_QUICK === '1';
  const cores = availableParallelism();

  const scenariosRaw = get('scenarios', 'BENCH_SCENARIOS');
  let scenarios: ScenarioId[] = [...SCENARIOS];
  if (scenariosRaw) {
    scenarios = scenariosRaw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean) as ScenarioId[];
    for (const s of scenarios)
      if (!SCENARIOS.includes(s))
        throw new UsageError(`unknown scenario ${JSON.stringify(s)}; choose from ${SCENARIOS.join(', ')}`);
  }
  const workersRaw = get('workers', 'WORKERS') ?? 'auto';
  const workers = workersRaw === 'auto' ? cores : num(workersRaw, '--workers', 1);
  const loadgen = (get('loadgen', 'BENCH_LOADGEN') ?? 'auto') as Options['loadgen'];
  if (!['auto', 'wrk', 'autocannon'].includes(loadgen))
    throw new UsageError(`--loadgen must be auto, wrk or autocannon`);
  const rate = get('rate', 'BENCH_RATE');
  const interval = get('token-interval-ms', 'BENCH_TOKEN_INTERVAL_MS');
  const out = get('out', 'BENCH_OUT');
  const profile = get('profile', 'BENCH_PROFILE_DIR');
  const targetsRaw = get('stream-targets', 'BENCH_STREAM_TARGETS');
  const streamTargets = targetsRaw
    ? targetsRaw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [...STREAM_TARGETS];
  for (const t of streamTargets)
    if (!(STREAM_TARGETS as readonly string[]).includes(t))
      throw new UsageError(`unknown stream target ${JSON.stringify(t)}; choose from ${STREAM_TARGETS.join(', ')}`);

  return {
    quick,
    scenarios,
    durationS: num(get('duration', 'BENCH_DURATION') ?? (quick ? '1' : '10'), '--duration', 1, false),
    warmupS: num(get('warmup', 'BENCH_WARMUP') ?? (quick ? '0.5' : '3'), '--warmup', 0, false),
    concurrency: num(get('concurrency', 'BENCH_CONCURRENCY') ?? (quick ? '16' : '64'), '--concurrency', 1),
    rate: rate === undefined ? null : num(rate, '--rate', 1),
    streamLevels: parseList(get('streams', 'BENCH_STREAMS') ?? (quick ? '200' : '1000,10000'), '--streams'),
    // Long enough that every stream of a level is open at once for a while after the ramp.
    tokensPerStream: num(get('tokens', 'BENCH_TOKENS') ?? (quick ? '20' : '40'), '--tokens', 2),
    promptKb: num(get('prompt-kb', 'BENCH_PROMPT_KB') ?? '0', '--prompt-kb', 0),
    rampPerSecond: num(get('ramp-per-s', 'BENCH_RAMP_PER_S') ?? (quick ? '1000' : '500'), '--ramp-per-s', 1),
    tokenIntervalMs: interval === undefined ? null : num(interval, '--token-interval-ms', 1),
    // Loopback sockets buffer about 4 MB before a writer sees a full socket, so answers must be
    // well beyond that for the gateway's own backpressure to be what is measured.
    slowReaders: num(get('slow-readers', 'BENCH_SLOW_READERS') ?? (quick ? '2' : '8'), '--slow-readers', 1),
    slowAnswerKb: num(get('slow-kb', 'BENCH_SLOW_KB') ?? (quick ? '12288' : '16384'), '--slow-kb', 16),
    slowHoldMs: quick ? 600 : 3000,
    slowBytesPerSecond: quick ? 16 * 1024 * 1024 : 2 * 1024 * 1024,
    workers,
    loadgen,
    wrkThreads: num(get('wrk-threads', 'BENCH_WRK_THREADS') ?? '1', '--wrk-threads', 1),
    nginx: !flags.has('no-nginx') && env.BENCH_NGINX !== '0',
    out: out ? path.resolve(out) : null,
    gatewayRoot: path.resolve(get('gateway-dir', 'BENCH_GATEWAY_DIR') ?? repoRoot),
    profileDir: profile ? path.resolve(profile) : null,
    gatewayNodeArgs: (get('gateway-node-args', 'BENCH_GATEWAY_NODE_ARGS') ?? '').split(' ').filter(Boolean),
    keepTemp: flags.has('keep-temp'),
    // In the report's order whatever order they were given in.
    streamTargets: STREAM_TARGETS.filter((t) => streamTargets.includes(t)),
  };
}

export { HELP };

/** Token gap for a level when not given: about 10,000 tokens/s across all streams, 20 ms at least. */
export function intervalFor(level: number, opts: Options): number {
  return opts.tokenIntervalMs ?? Math.max(20, Math.round(level / 10));
}
