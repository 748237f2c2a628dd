// What every part of the bench suite (`npm run bench`, bench/run.ts) shares: the run's clock and
// log line, the targets and stores it set up (Bench), what a scenario answers, and the clean-up
// that stops every child however the run ends.

import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { stopAll, type Child } from '../lib/children.js';
import type { GatewayProcess } from '../lib/gateway.js';
import { type NginxProxy } from '../lib/nginx.js';
import { type Options, type ScenarioId } from '../lib/options.js';
import type { TreeSampler } from '../lib/proc.js';
import { type BenchStores } from '../lib/stores.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const T0 = performance.now();
const elapsed = () => ((performance.now() - T0) / 1000).toFixed(1).padStart(5);
export const say = (msg: string) => process.stderr.write(`[bench ${elapsed()}s] ${msg}\n`);

/** Share of failed requests or streams above which a measurement is not trusted. */
export const MAX_FAILURE_SHARE = 0.01;
/** "A few chunks": what the slow-reader target allows the gateway to hold for one client. */
export const FEW_CHUNKS = 4;

/** The gateway's METRICS_TOKEN for this run: /metrics on the public port needs it. */
export const METRICS_TOKEN = randomBytes(24).toString('hex');
export const OPERATOR = { authorization: `Bearer ${METRICS_TOKEN}` };

export interface Bench {
  opts: Options;
  tmp: string;
  stores: BenchStores;
  workers: number;
  gateway: GatewayProcess;
  key: string;
  fake: string;
  static: string;
  fakeChild: Child;
  fakeSampler: TreeSampler;
  nginx: NginxProxy | null;
  nginxSampler: TreeSampler | null;
  nginxSkipped: string | null;
  /** The bare uWS + upstream-client proxy (bench/upstream/bare-proxy.ts): routes /s → static, /f → fake. */
  bare: string;
  bareSampler: TreeSampler;
  /**
   * The bare proxy with the gateway's hot-store work per request (bench/upstream/ledger.ts),
   * on the gateway's own hot store: the floor the money invariants' round trips leave.
   */
  ledger: string;
  ledgerSampler: TreeSampler;
  wrk: { binary: string; version: string } | null;
  /** Results other scenarios build on. */
  saturationRps: number | null;
}

export const cleanups: (() => Promise<void>)[] = [];
let cleaning: Promise<void> | undefined;
export function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch((err: Error) => say(`cleanup: ${err.message}`));
    await stopAll(5000);
  })();
  return cleaning;
}

export function ticker(line: () => string, everyMs = 2000): () => void {
  const t = setInterval(() => say(line()), everyMs);
  return () => clearInterval(t);
}

export interface ScenarioOutcome {
  results: Record<string, unknown>;
  failures: string[];
  notes: string[];
}

export const TITLES: Record<ScenarioId, string> = {
  throughput: 'Non-stream throughput at fixed concurrency (chat surface)',
  latency: 'Latency at a fixed offered rate (half saturation)',
  streams: 'Concurrent paced streams (chat surface, same dialect)',
  cross: 'Concurrent paced streams through a cross-dialect path',
  slow: 'Slow reader: bounded memory, upstream paused',
};
