// `npm run bench [-- --quick]`: the gateway's bench suite.
//
// Starts its own upstreams (the scripted fake from test/fake-upstream for streams and slow
// readers, a static uWS upstream for pure throughput), nginx in front of them as a baseline
// when installed, and the gateway itself with `node src/bin.js serve` on the configured stores,
// with an account made through the real CLI. Then runs the scenarios against direct, nginx and
// the gateway, prints tables, and writes bench/reports/<timestamp>.{json,md}. Exits non-zero if
// a scenario could not run, the gateway crashed, or the report is malformed; never for speed.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fdLimitPrefix, killAllNow, runCommand, startChild, stopAll, type Child } from './lib/children.js';
import {
  BENCH_MODEL,
  createAccount,
  GatewayProcess,
  gatewayEntry,
  STATIC_MODEL,
  writeCatalogue,
} from './lib/gateway.js';
import { fetchText, freePort, getJson, scrapeMax, sleep } from './lib/http.js';
import {
  autocannonClosedLoop,
  autocannonVersion,
  findWrk,
  openLoop,
  wrkClosedLoop,
  type ClosedLoopResult,
  type HttpTarget,
} from './lib/loadgen.js';
import { findNginx, startNginx, type NginxInfo, type NginxProxy } from './lib/nginx.js';
import { HELP, intervalFor, parseOptions, UsageError, type Options, type ScenarioId } from './lib/options.js';
import { mb, procAvailable, rssByProcess, TreeSampler, UsageWindow, waitQuiet } from './lib/proc.js';
import {
  REPORT_SCHEMA,
  renderMarkdown,
  renderText,
  validateReport,
  type Report,
  type ScenarioReport,
  type Table,
  type TargetCheck,
} from './lib/report.js';
import { slowRead, type SlowReadProgress } from './lib/slow-reader.js';
import { minus, ratio } from './lib/stats.js';
import { prepareStores, type BenchStores } from './lib/stores.js';
import { runStreams, type StreamProgress, type StreamRequest } from './lib/streams.js';
import { runtime, runtimeText } from './lib/runtime.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const T0 = performance.now();
const elapsed = () => ((performance.now() - T0) / 1000).toFixed(1).padStart(5);
const say = (msg: string) => process.stderr.write(`[bench ${elapsed()}s] ${msg}\n`);

/** Share of failed requests or streams above which a measurement is not trusted. */
const MAX_FAILURE_SHARE = 0.01;
/** "A few chunks": what the slow-reader target allows the gateway to hold for one client. */
const FEW_CHUNKS = 4;

/** The gateway's METRICS_TOKEN for this run: /metrics on the public port needs it. */
const METRICS_TOKEN = randomBytes(24).toString('hex');
const OPERATOR = { authorization: `Bearer ${METRICS_TOKEN}` };

interface Bench {
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

// ---------------------------------------------------------------- lifecycle

const cleanups: (() => Promise<void>)[] = [];
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch((err: Error) => say(`cleanup: ${err.message}`));
    await stopAll(5000);
  })();
  return cleaning;
}
let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    if (interrupted) {
      killAllNow();
      process.exit(130);
    }
    interrupted = true;
    say(`${sig}: stopping every child process and cleaning up (again to force)`);
    void cleanup().finally(() => process.exit(130));
  });
}
process.on('exit', killAllNow);

function ticker(line: () => string, everyMs = 2000): () => void {
  const t = setInterval(() => say(line()), everyMs);
  return () => clearInterval(t);
}

function ownFdLimit(): number {
  try {
    const m = /Max open files\s+(\d+|unlimited)/.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? (m[1] === 'unlimited' ? Infinity : Number(m[1])) : Infinity;
  } catch {
    return Infinity;
  }
}

async function raiseOwnFdLimit(need: number): Promise<string> {
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

// ---------------------------------------------------------------- targets

const chatBody = (model: string) =>
  JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello in one sentence.' }] });

function nonStreamTargets(
  b: Bench,
): { name: string; target: HttpTarget | null; sampler: TreeSampler | null; skipped?: string }[] {
  return [
    {
      name: 'direct',
      target: { url: `${b.static}/v1/chat/completions`, headers: {}, body: chatBody('bench-upstream') },
      sampler: null,
    },
    {
      name: 'nginx',
      target: b.nginx
        ? { url: `${b.nginx.urls.static_up}/v1/chat/completions`, headers: {}, body: chatBody('bench-upstream') }
        : null,
      sampler: b.nginxSampler,
      skipped: b.nginxSkipped ?? undefined,
    },
    {
      name: 'bare',
      target: { url: `${b.bare}/s/v1/chat/completions`, headers: {}, body: chatBody('bench-upstream') },
      sampler: b.bareSampler,
    },
    {
      name: 'ledger',
      target: { url: `${b.ledger}/s/v1/chat/completions`, headers: {}, body: chatBody('bench-upstream') },
      sampler: b.ledgerSampler,
    },
    {
      name: 'gateway',
      target: {
        url: `${b.gateway.url}/v1/chat/completions`,
        headers: { authorization: `Bearer ${b.key}` },
        body: chatBody(STATIC_MODEL),
      },
      sampler: b.gateway.sampler,
    },
  ];
}

function streamTargets(
  b: Bench,
  kind: 'same' | 'cross',
  tokens: number,
  intervalMs: number,
): { name: string; request: StreamRequest | null; sampler: TreeSampler | null; skipped?: string }[] {
  // A coding agent's prompt is tens to hundreds of KB; `--prompt-kb` makes the streams carry one.
  const filler =
    b.opts.promptKb > 0
      ? 'Context. '.repeat(Math.ceil((b.opts.promptKb * 1024) / 9)).slice(0, b.opts.promptKb * 1024) + '\n'
      : '';
  const directive = `${filler}Count for me. [[paced:${tokens}:${intervalMs}]]`;
  if (kind === 'same') {
    const body = (model: string) =>
      JSON.stringify({
        model,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: directive }],
      });
    const marker = '"content":"tok';
    return [
      {
        name: 'direct',
        request: { origin: b.fake, path: '/v1/chat/completions', headers: {}, body: body('bench-upstream'), marker },
        sampler: null,
      },
      {
        name: 'nginx',
        request: b.nginx
          ? {
              origin: b.nginx.urls.fake_up!,
              path: '/v1/chat/completions',
              headers: {},
              body: body('bench-upstream'),
              marker,
            }
          : null,
        sampler: b.nginxSampler,
        skipped: b.nginxSkipped ?? undefined,
      },
      {
        name: 'bare',
        request: { origin: b.bare, path: '/f/v1/chat/completions', headers: {}, body: body('bench-upstream'), marker },
        sampler: b.bareSampler,
      },
      {
        name: 'ledger',
        request: {
          origin: b.ledger,
          path: '/f/v1/chat/completions',
          headers: {},
          body: body('bench-upstream'),
          marker,
        },
        sampler: b.ledgerSampler,
      },
      {
        name: 'gateway',
        request: {
          origin: b.gateway.url,
          path: '/v1/chat/completions',
          headers: { authorization: `Bearer ${b.key}` },
          body: body(BENCH_MODEL),
          marker,
        },
        sampler: b.gateway.sampler,
      },
    ];
  }
  // Anthropic Messages client. Direct: the fake answering in Anthropic's dialect itself (what
  // such a client sees without a gateway). Gateway: translated to the OpenAI-dialect fake and back.
  const body = (model: string) =>
    JSON.stringify({ model, max_tokens: 1024, stream: true, messages: [{ role: 'user', content: directive }] });
  const marker = '"text":"tok';
  const headers = { 'anthropic-version': '2023-06-01' };
  return [
    {
      name: 'direct',
      request: {
        origin: b.fake,
        path: '/v1/messages',
        headers: { ...headers, 'x-api-key': 'direct' },
        body: body('bench-upstream'),
        marker,
      },
      sampler: null,
    },
    {
      name: 'gateway',
      request: {
        origin: b.gateway.url,
        path: '/v1/messages',
        headers: { ...headers, 'x-api-key': b.key },
        body: body(BENCH_MODEL),
        marker,
      },
      sampler: b.gateway.sampler,
    },
  ];
}

const TARGET_NAMES = ['direct', 'nginx', 'bare', 'ledger', 'gateway'] as const;

/**
 * One target of a scenario, built just before it runs: a gateway that died during an earlier
 * target is started again first (the crash is already on this scenario's record), so one crash
 * does not fail every later measurement too.
 */
async function targetOf<T extends { name: string }>(b: Bench, name: string, all: () => T[]): Promise<T | undefined> {
  if (name === 'gateway') {
    await b.gateway.ensureRunning();
    // Start from an idle gateway, not one still finishing the previous run's work.
    const waited = await waitQuiet(b.gateway.sampler, { maxMs: b.opts.quick ? 2000 : 15_000 });
    if (waited > 1000) say(`gateway busy with earlier work: waited ${(waited / 1000).toFixed(1)} s for it to go idle`);
  }
  return all().find((t) => t.name === name);
}

async function closedLoop(b: Bench, target: HttpTarget, durationS: number): Promise<ClosedLoopResult> {
  if (b.wrk)
    return wrkClosedLoop({
      ...b.wrk,
      dir: b.tmp,
      target,
      connections: b.opts.concurrency,
      durationS: Math.max(1, Math.round(durationS)),
      threads: b.opts.wrkThreads,
    });
  return autocannonClosedLoop({ target, connections: b.opts.concurrency, durationS });
}

/** Waits until the fake upstream has no stream in progress, so runs do not overlap. */
async function fakeIdle(b: Bench, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const s = await getJson<{ active: number }>(`${b.fake}/_stats`).catch(() => ({ active: 0 }));
    if (s.active <= 0) return;
    await sleep(200);
  }
}

// ---------------------------------------------------------------- scenarios

interface ScenarioOutcome {
  results: Record<string, unknown>;
  failures: string[];
  notes: string[];
}

async function scenarioThroughput(b: Bench): Promise<ScenarioOutcome> {
  const { opts } = b;
  const failures: string[] = [];
  const notes: string[] = [];
  const targets: Record<string, Record<string, unknown>> = {};
  for (const name of TARGET_NAMES) {
    const t = (await targetOf(b, name, () => nonStreamTargets(b)))!;
    if (!t.target) {
      targets[t.name] = { status: 'skipped', reason: t.skipped ?? 'not available' };
      continue;
    }
    // The gateway is JavaScript that has to warm up (JIT, pools); --quick warms only it.
    const warm = opts.warmupS > 0 && (!opts.quick || t.name === 'gateway') ? Math.max(1, Math.ceil(opts.warmupS)) : 0;
    say(
      `throughput → ${t.name}: ${warm ? `${warm}s warm-up, then ` : ''}${opts.durationS}s at ${opts.concurrency} connections`,
    );
    if (warm) await closedLoop(b, t.target, warm);
    const win = t.sampler ? new UsageWindow(t.sampler) : null;
    const r = await closedLoop(b, t.target, opts.durationS);
    const u = win?.finish();
    const bad = r.errors + r.non2xx;
    let status = 'ok';
    if (r.requests === 0 || bad > r.requests * MAX_FAILURE_SHARE) {
      status = 'failed';
      failures.push(`${t.name}: ${bad} of ${r.requests} requests failed (errors ${r.errors}, non-2xx ${r.non2xx})`);
    }
    targets[t.name] = {
      status,
      tool: r.tool,
      requests: r.requests,
      duration_s: r.durationS,
      rps: r.rps,
      latency_ms: r.latency,
      latency_resolution_ms: r.latencyResolutionMs,
      errors: r.errors,
      non2xx: r.non2xx,
      proxy: u
        ? {
            cpu_s: u.cpuSeconds,
            cpu_ms_per_request: r.requests ? Math.round((u.cpuSeconds / r.requests) * 1e6) / 1e3 : null,
            rss_peak_mb: u.rssPeakMb,
            processes: u.processes,
          }
        : null,
    };
    say(
      `throughput → ${t.name}: ${r.rps.toLocaleString('en-US')} req/s, p99 ${r.latency.p99} ms${bad ? `, ${bad} failed` : ''}`,
    );
  }
  const gw = targets.gateway as { rps?: number; status?: string; latency_ms?: { p99: number | null } } | undefined;
  const ng = targets.nginx as typeof gw;
  const di = targets.direct as typeof gw;
  const ba = targets.bare as typeof gw;
  const le = targets.ledger as typeof gw;
  if (gw?.status === 'ok') b.saturationRps = gw.rps ?? null;
  if (!b.wrk) notes.push('autocannon records latency in whole milliseconds; install wrk for microsecond figures.');
  if (opts.quick) notes.push('--quick: only the gateway was warmed up.');
  return {
    results: {
      connections: opts.concurrency,
      duration_s: opts.durationS,
      warmup_s: opts.warmupS,
      upstream: 'static (bench/upstream/static.ts, uWS)',
      targets,
      ratios: {
        gateway_vs_nginx_rps: ng?.status === 'ok' ? ratio(gw?.rps, ng.rps) : null,
        gateway_vs_bare_rps: ba?.status === 'ok' ? ratio(gw?.rps, ba.rps) : null,
        bare_vs_nginx_rps: ba?.status === 'ok' && ng?.status === 'ok' ? ratio(ba.rps, ng.rps) : null,
        ledger_vs_bare_rps: le?.status === 'ok' && ba?.status === 'ok' ? ratio(le.rps, ba.rps) : null,
        gateway_vs_ledger_rps: le?.status === 'ok' ? ratio(gw?.rps, le.rps) : null,
        gateway_vs_direct_rps: ratio(gw?.rps, di?.rps),
        nginx_vs_direct_rps: ng?.status === 'ok' ? ratio(ng.rps, di?.rps) : null,
      },
      added_p99_ms: {
        gateway: minus(gw?.latency_ms?.p99, di?.latency_ms?.p99),
        nginx: ng?.status === 'ok' ? minus(ng.latency_ms?.p99, di?.latency_ms?.p99) : null,
        bare: ba?.status === 'ok' ? minus(ba.latency_ms?.p99, di?.latency_ms?.p99) : null,
        ledger: le?.status === 'ok' ? minus(le.latency_ms?.p99, di?.latency_ms?.p99) : null,
      },
    },
    failures,
    notes,
  };
}

async function scenarioLatency(b: Bench): Promise<ScenarioOutcome> {
  const { opts } = b;
  const failures: string[] = [];
  const notes: string[] = [];
  let source: string;
  if (opts.rate) source = 'given with --rate';
  else {
    if (b.saturationRps === null) {
      say('latency: no throughput result to halve; measuring gateway saturation first');
      const gw = nonStreamTargets(b).find((t) => t.name === 'gateway')!.target!;
      await closedLoop(b, gw, 1);
      const r = await closedLoop(b, gw, Math.max(2, Math.min(5, opts.durationS)));
      b.saturationRps = r.rps;
    }
    source = `half of the gateway's measured saturation (${b.saturationRps!.toLocaleString('en-US')} req/s at ${opts.concurrency} connections)`;
  }
  const rate = opts.rate ?? Math.max(10, Math.round(b.saturationRps! / 2));
  // Enough connections that requests never wait in the client for one: an open loop must offer
  // each request when it is due, whatever the answers before it are doing.
  const connections = Math.min(1024, Math.max(64, Math.ceil(rate / 10)));
  const targets: Record<string, Record<string, unknown>> = {};
  for (const name of TARGET_NAMES) {
    const t = (await targetOf(b, name, () => nonStreamTargets(b)))!;
    if (!t.target) {
      targets[t.name] = { status: 'skipped', reason: t.skipped ?? 'not available' };
      continue;
    }
    say(
      `latency → ${t.name}: ${rate.toLocaleString('en-US')} req/s offered after ${opts.warmupS}s of warm-up rising to it, for ${opts.durationS}s`,
    );
    const win = t.sampler ? new UsageWindow(t.sampler) : null;
    const r = await openLoop({ target: t.target, rate, durationS: opts.durationS, warmupS: opts.warmupS, connections });
    const u = win?.finish();
    const bad = r.errors + r.non2xx;
    let status = 'ok';
    if (r.ok === 0 || bad > r.sent * MAX_FAILURE_SHARE) {
      status = 'failed';
      failures.push(`${t.name}: ${bad} of ${r.sent} requests failed (${r.firstError ?? 'no detail'})`);
    }
    if (r.achievedRps < rate * 0.9)
      notes.push(`${t.name}: the client offered only ${r.achievedRps} of ${rate} req/s (client starved of CPU)`);
    if (r.maxQueuedInClient > 0)
      notes.push(
        `${t.name}: up to ${r.maxQueuedInClient} requests waited for a free client connection (${connections} in the pool): its latency includes that wait, i.e. the target could not keep up with the offered rate.`,
      );
    targets[t.name] = {
      status,
      offered_rps: rate,
      achieved_rps: r.achievedRps,
      sent: r.sent,
      ok: r.ok,
      errors: r.errors,
      non2xx: r.non2xx,
      latency_ms: r.latency,
      client_dispatch_lag_ms: r.dispatchLagMs,
      max_in_flight: r.maxInFlight,
      max_queued_in_client: r.maxQueuedInClient,
      // Per request offered over the whole run: at a fixed rate this is what each request costs
      // the proxy's processes, wake-ups included, which a closed loop at saturation hides.
      proxy: u
        ? { cpu_s: u.cpuSeconds, cpu_us_per_request: perRequestUs(u.cpuSeconds, r.offered), rss_peak_mb: u.rssPeakMb }
        : null,
      client_cpu_us_per_request: perRequestUs(r.clientCpuS, r.offered),
      first_error: r.firstError ?? null,
    };
    say(`latency → ${t.name}: p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, p99.9 ${r.latency.p999} ms`);
  }
  const lat = (n: string) =>
    targets[n]?.status === 'ok'
      ? (targets[n]!.latency_ms as { p50: number | null; p99: number | null; p999: number | null })
      : null;
  const added = (n: string) => {
    const t = lat(n);
    const d = lat('direct');
    return t && d ? { p50: minus(t.p50, d.p50), p99: minus(t.p99, d.p99), p999: minus(t.p999, d.p999) } : null;
  };
  return {
    results: {
      rate_rps: rate,
      rate_source: source,
      duration_s: opts.durationS,
      client: 'bench open-loop client (undici Pool, fixed schedule)',
      connections,
      targets,
      added_ms: { gateway: added('gateway'), nginx: added('nginx'), bare: added('bare'), ledger: added('ledger') },
    },
    failures,
    notes,
  };
}

const perRequestUs = (cpuS: number, requests: number) => (requests > 0 ? Math.round((cpuS / requests) * 1e6) : null);
const kbPerStream = (rssMb: number, baseMb: number, streams: number) =>
  Math.round(((rssMb - baseMb) * 1024 * 10) / streams) / 10;

/** How the stream levels were warmed up, from what each target recorded. */
function warmupNote(levels: any[]): string {
  const warmed = new Map<string, number>();
  for (const l of levels)
    for (const [name, t] of Object.entries(l.targets as Record<string, any>))
      if (t.warmup_streams > 0) warmed.set(name, t.warmup_streams);
  if (warmed.size === 0) return 'no warm-up; ';
  const counts = [...new Set(warmed.values())].join(' or ');
  return `the first level of ${[...warmed.keys()].join(', ')} after ${counts} streams of its own that were not measured (--warmup × --ramp-per-s), KB/stream counted from its RSS before them; `;
}

function clientCpuRange(targets: Record<string, any>): string {
  const v = Object.values(targets)
    .map((t) => t.client_cpu_us_per_request)
    .filter((x): x is number => typeof x === 'number');
  return v.length === 0 ? '–' : `${Math.min(...v)}–${Math.max(...v)}`;
}

async function streamLevels(b: Bench, kind: 'same' | 'cross'): Promise<ScenarioOutcome> {
  const { opts } = b;
  const failures: string[] = [];
  const notes: string[] = [];
  const levels: Record<string, unknown>[] = [];
  // Each target's first level is preceded by streams of its own that are not measured, as the
  // other scenarios warm up: a cold worker spends its first tens of thousands of events compiling
  // (V8's optimising compiler took about a fifth of the gateway's CPU in a cold 1,000-stream
  // level), which measures how much JavaScript a proxy has rather than what a token costs it.
  const warmed = new Set<string>();
  // --quick warms only the gateway, as its throughput run does.
  const warmupStreams = (name: string, level: number) =>
    opts.quick && name !== 'gateway' ? 0 : Math.min(level, Math.ceil(opts.warmupS * opts.rampPerSecond));
  for (const level of opts.streamLevels) {
    const tokens = opts.tokensPerStream;
    const intervalMs = intervalFor(level, opts);
    const rampMs = Math.max(50, Math.round((level / opts.rampPerSecond) * 1000));
    const deadlineMs = rampMs + tokens * intervalMs * 3 + 60_000;
    const targets: Record<string, Record<string, unknown>> = {};
    for (const name of opts.streamTargets) {
      const t = await targetOf(b, name, () => streamTargets(b, kind, tokens, intervalMs));
      if (!t) continue;
      if (!t.request) {
        targets[t.name] = { status: 'skipped', reason: t.skipped ?? 'not available' };
        continue;
      }
      await fakeIdle(b);
      const label = `${kind === 'same' ? 'streams' : 'cross-dialect'} ${level} → ${t.name}`;
      const warm = warmed.has(t.name) ? 0 : warmupStreams(t.name, level);
      warmed.add(t.name);
      // Memory per stream counts from what the proxy held before the warm-up: what it keeps from
      // those streams (heap it grew, pages it did not give back) is memory the level uses too.
      const idleRss = warm > 0 && t.sampler ? t.sampler.sample(true).rssBytes : undefined;
      if (warm > 0) {
        say(`${label}: warm-up, ${warm} streams (not measured)`);
        const w = await runStreams({
          request: t.request,
          count: warm,
          rampMs: Math.max(50, Math.round((warm / opts.rampPerSecond) * 1000)),
          tokensPerStream: tokens,
          deadlineMs,
        });
        if (w.completed < warm * (1 - MAX_FAILURE_SHARE))
          notes.push(`${label}: only ${w.completed} of ${warm} warm-up streams completed`);
        await fakeIdle(b);
      }
      say(`${label}: ${level} streams × ${tokens} tokens every ${intervalMs} ms, opened over ${rampMs} ms`);
      const progress: StreamProgress = { started: 0, open: 0, completed: 0, failed: 0, tokens: 0 };
      const win = t.sampler ? new UsageWindow(t.sampler, 200, () => progress.open === level) : null;
      const fakeWin = new UsageWindow(b.fakeSampler, 1000);
      const clientCpu = process.cpuUsage();
      const stop = ticker(
        () =>
          `${label}: ${progress.open} open, ${progress.completed} done, ${progress.failed} failed, ${progress.tokens.toLocaleString('en-US')} tokens${win ? `, proxy RSS ${mb(win.last.rssBytes)} MB` : ''}`,
      );
      let r;
      try {
        r = await runStreams({
          request: t.request,
          count: level,
          rampMs,
          tokensPerStream: tokens,
          deadlineMs,
          progress,
        });
      } finally {
        stop();
      }
      const u = win?.finish();
      // Memory per stream counts from before the warm-up when there was one (see idleRss); without
      // a sampler there is no `u`, and no memory figure to count.
      const baseMb = idleRss === undefined ? (u?.rssStartMb ?? 0) : mb(idleRss);
      const fakeU = fakeWin.finish();
      const clientUsed = process.cpuUsage(clientCpu);
      let status = 'ok';
      const problems: string[] = [];
      if (r.completed === 0) problems.push('no stream completed');
      if (r.failed > level * MAX_FAILURE_SHARE) problems.push(`${r.failed} of ${level} streams failed`);
      if (r.wrongTokenCount > level * MAX_FAILURE_SHARE)
        problems.push(`${r.wrongTokenCount} streams ended with the wrong number of tokens`);
      if (problems.length) {
        status = 'failed';
        failures.push(
          `${label}: ${problems.join('; ')}${r.firstErrors.length ? ` (${r.firstErrors.join(' | ')})` : ''}`,
        );
      }
      targets[t.name] = {
        status,
        requested: level,
        warmup_streams: warm,
        completed: r.completed,
        failed: r.failed,
        timed_out: r.timedOut,
        wrong_token_count: r.wrongTokenCount,
        tokens: r.tokens,
        expected_tokens: r.expectedTokens,
        peak_open: r.peakOpen,
        wall_s: r.wallS,
        ttft_ms: r.ttftMs,
        inter_token_ms: r.interTokenMs,
        first_errors: r.firstErrors,
        // The other processes on the same cores during this run.
        upstream_cpu_s: fakeU.cpuSeconds,
        client_cpu_s: Math.round((clientUsed.user + clientUsed.system) / 1e4) / 100,
        proxy: u
          ? {
              rss_start_mb: u.rssStartMb,
              rss_peak_mb: u.rssPeakMb,
              rss_end_mb: u.rssEndMb,
              pss_start_mb: u.pssStartMb,
              pss_peak_mb: u.pssPeakMb,
              ...(idleRss === undefined ? {} : { rss_before_warmup_mb: mb(idleRss) }),
              kb_per_stream: kbPerStream(u.rssPeakMb, baseMb, level),
              // While every stream was open: what the open streams hold, without what their ends
              // leave behind (settles, usage records, connections closed) until the next full GC.
              rss_all_open_mb: u.rssHeldPeakMb,
              kb_per_open_stream: u.rssHeldPeakMb === null ? null : kbPerStream(u.rssHeldPeakMb, baseMb, level),
              cpu_s: u.cpuSeconds,
              cpu_s_per_million_tokens: r.tokens ? Math.round((u.cpuSeconds / (r.tokens / 1e6)) * 10) / 10 : null,
              cpu_ms_per_stream: Math.round((u.cpuSeconds / level) * 1e4) / 10,
              // The first process's own part: the gateway's primary (its usage writer), the bare proxy's first copy.
              first_process_cpu_s: u.rootCpuSeconds,
              processes: u.processes,
            }
          : null,
      };
      say(
        `${label}: ${r.completed}/${level} complete, TTFT p50 ${r.ttftMs.p50} / p99 ${r.ttftMs.p99} ms, gap p99 ${r.interTokenMs.p99} ms${u ? `, RSS peak ${u.rssPeakMb} MB, ${u.cpuSeconds} CPU s (first process ${u.rootCpuSeconds})` : ''}`,
      );
    }
    const overhead = (n: string) => {
      const t = targets[n] as
        | { status: string; ttft_ms: { p50: number; p99: number }; inter_token_ms: { p50: number; p99: number } }
        | undefined;
      const d = targets.direct as typeof t;
      if (t?.status !== 'ok' || d?.status !== 'ok') return null;
      return {
        ttft_p50_ms: minus(t.ttft_ms.p50, d.ttft_ms.p50),
        ttft_p99_ms: minus(t.ttft_ms.p99, d.ttft_ms.p99),
        inter_token_p50_ms: minus(t.inter_token_ms.p50, d.inter_token_ms.p50),
        inter_token_p99_ms: minus(t.inter_token_ms.p99, d.inter_token_ms.p99),
      };
    };
    levels.push({
      streams: level,
      tokens_per_stream: tokens,
      token_interval_ms: intervalMs,
      ramp_ms: rampMs,
      targets,
      overhead: {
        gateway: overhead('gateway'),
        nginx: overhead('nginx'),
        bare: overhead('bare'),
        ledger: overhead('ledger'),
      },
    });
  }
  return {
    results: {
      surface:
        kind === 'same'
          ? 'POST /v1/chat/completions (OpenAI client → OpenAI-dialect upstream, pass-through)'
          : 'POST /v1/messages with x-api-key (Anthropic client → OpenAI-dialect upstream, translated both ways)',
      upstream: 'test/fake-upstream, paced scenario',
      client: 'bench stream client (undici Pool, one connection per stream)',
      levels,
    },
    failures,
    notes,
  };
}

interface FakeStats {
  bytesWritten: number;
  backpressureEvents: number;
  pausedMs: number;
  streams: number;
}

/** Slow readers against one origin; the fake's counters tell what the upstream went through. */
async function slowReaders(
  b: Bench,
  label: string,
  origin: string,
  headers: Record<string, string>,
  model: string,
  onTick?: () => string,
) {
  const { opts } = b;
  await fakeIdle(b);
  const before = await getJson<FakeStats>(`${b.fake}/_stats`);
  const progress: SlowReadProgress = { bytes: 0 };
  let inFlightMax = 0;
  const poll = setInterval(() => {
    getJson<FakeStats>(`${b.fake}/_stats`).then(
      (s) => {
        const inFlight = s.bytesWritten - before.bytesWritten - progress.bytes;
        if (inFlight > inFlightMax) inFlightMax = inFlight;
      },
      () => {},
    );
  }, 100);
  const stop = ticker(
    () =>
      `slow reader → ${label}: ${(progress.bytes / 1048576).toFixed(1)} of ~${((opts.slowReaders * opts.slowAnswerKb * 1.15) / 1024).toFixed(0)} MB read${onTick ? `, ${onTick()}` : ''}`,
  );
  say(
    `slow reader → ${label}: ${opts.slowReaders} clients, ${opts.slowAnswerKb} KB answers; nothing read for ${opts.slowHoldMs} ms, then ${(opts.slowBytesPerSecond / 1024).toFixed(0)} KB/s each`,
  );
  const body = JSON.stringify({
    model,
    stream: true,
    messages: [{ role: 'user', content: `Write at length. [[long:${opts.slowAnswerKb}]]` }],
  });
  const expectedS = opts.slowHoldMs / 1000 + (opts.slowAnswerKb * 1024 * 1.3) / opts.slowBytesPerSecond;
  let results;
  try {
    results = await Promise.all(
      Array.from({ length: opts.slowReaders }, () =>
        slowRead({
          url: origin,
          path: '/v1/chat/completions',
          headers,
          body,
          holdMs: opts.slowHoldMs,
          bytesPerSecond: opts.slowBytesPerSecond,
          timeoutMs: Math.round(expectedS * 3000) + 30_000,
          progress,
        }),
      ),
    );
  } finally {
    stop();
    clearInterval(poll);
  }
  const after = await getJson<FakeStats>(`${b.fake}/_stats`);
  const completed = results.filter((r) => r.complete).length;
  const bytesRead = results.reduce((n, r) => n + r.bytes, 0);
  return {
    completed,
    bytesRead,
    firstError: results.find((r) => !r.complete)?.error,
    wallS: Math.max(...results.map((r) => r.wallS)),
    upstream: {
      backpressure_events: after.backpressureEvents - before.backpressureEvents,
      paused_ms: Math.round(after.pausedMs - before.pausedMs),
      max_in_flight_kb_per_reader: Math.round(inFlightMax / 1024 / opts.slowReaders),
    },
  };
}

async function scenarioSlowReader(b: Bench): Promise<ScenarioOutcome> {
  const { opts } = b;
  const failures: string[] = [];
  const notes: string[] = [];
  // Direct first: how much the kernel's socket buffers alone hold for a reader that stopped.
  const direct = await slowReaders(b, 'direct', b.fake, {}, 'bench-upstream');
  const metricAttempts = b.workers * 8;
  const mBefore = await scrapeMax(b.gateway.url, metricAttempts, OPERATOR);
  const bufferedBefore = mBefore.get('airouter_stream_buffered_bytes_max') ?? null;
  // Let the previous scenarios' garbage settle so the growth below is this scenario's.
  await sleep(opts.quick ? 300 : 1000);
  const win = new UsageWindow(b.gateway.sampler, 100);
  const gw = await slowReaders(
    b,
    'gateway',
    b.gateway.url,
    { authorization: `Bearer ${b.key}` },
    BENCH_MODEL,
    () => `gateway RSS ${mb(win.last.rssBytes)} MB`,
  );
  const u = win.finish();
  const mAfter = await scrapeMax(b.gateway.url, metricAttempts, OPERATOR);
  for (const [name, r] of [
    ['direct', direct],
    ['gateway', gw],
  ] as const) {
    if (r.completed < opts.slowReaders)
      failures.push(
        `${name}: ${opts.slowReaders - r.completed} of ${opts.slowReaders} slow readers did not get a whole answer (${r.firstError ?? 'no detail'})`,
      );
  }
  const bytesPerChunk = gw.completed ? gw.bytesRead / gw.completed / opts.slowAnswerKb : 1100;
  const buffered = mAfter.get('airouter_stream_buffered_bytes_max') ?? null;
  if (bufferedBefore)
    notes.push(
      `airouter_stream_buffered_bytes_max was already ${bufferedBefore} before this scenario (it is a per-process maximum since start).`,
    );
  if (buffered === null) notes.push('GET /metrics has no airouter_stream_buffered_bytes_max.');
  const answerMb = (opts.slowReaders * opts.slowAnswerKb) / 1024;
  if (gw.upstream.backpressure_events === 0)
    notes.push(
      'the upstream never saw backpressure through the gateway: something between them absorbed whole answers.',
    );
  if (direct.upstream.max_in_flight_kb_per_reader >= opts.slowAnswerKb * 0.9)
    notes.push(
      `answers of ${opts.slowAnswerKb} KB fit in the kernel's socket buffers (${direct.upstream.max_in_flight_kb_per_reader} KB in flight direct): use a larger --slow-kb to exercise the gateway's backpressure.`,
    );
  notes.push(
    "in flight = bytes the upstream wrote that the reader has not read: socket buffers of every hop plus what a proxy holds. Through the gateway there are two TCP hops, so about twice the direct figure is the kernel's share.",
  );
  if (b.stores.kind.sql === 'embedded')
    notes.push(
      'embedded stores: the gateway process also holds PGlite (a whole Postgres in WASM), which dominates its RSS.',
    );
  return {
    results: {
      readers: opts.slowReaders,
      answer_kb: opts.slowAnswerKb,
      hold_ms: opts.slowHoldMs,
      read_bytes_per_s: opts.slowBytesPerSecond,
      completed: gw.completed,
      bytes_read: gw.bytesRead,
      wall_s: gw.wallS,
      direct: { completed: direct.completed, ...direct.upstream },
      upstream: gw.upstream,
      gateway: {
        rss_before_mb: u.rssStartMb,
        rss_peak_mb: u.rssPeakMb,
        rss_growth_mb: Math.round((u.rssPeakMb - u.rssStartMb) * 10) / 10,
        answers_total_mb: Math.round(answerMb * 10) / 10,
        rss_growth_share_of_answers: Math.round(((u.rssPeakMb - u.rssStartMb) / answerMb) * 1000) / 1000,
        buffered_bytes_max: buffered,
        buffered_chunks_max: buffered === null ? null : Math.round((buffered / bytesPerChunk) * 10) / 10,
        bytes_per_chunk: Math.round(bytesPerChunk),
        backpressure_total_max_worker: mAfter.get('airouter_stream_backpressure_total') ?? null,
        metrics_note: 'per-worker values; the largest seen over several scrapes',
      },
    },
    failures,
    notes,
  };
}

// ---------------------------------------------------------------- report

function tables(r: Report): Table[] {
  const out: Table[] = [];
  const sc = (id: string) => r.scenarios.find((s) => s.id === id);
  const st = (s: ScenarioReport) =>
    s.status === 'ok' ? '' : ` [${s.status.toUpperCase()}${s.error ? `: ${s.error.slice(0, 160)}` : ''}]`;

  const tp = sc('throughput');
  if (tp && tp.status !== 'skipped' && tp.results.targets) {
    const res = tp.results as any;
    const nginxRps = res.targets.nginx?.status === 'ok' ? res.targets.nginx.rps : null;
    out.push({
      title: `1. Non-stream throughput: chat surface, static upstream, ${res.connections} connections, ${res.duration_s} s per target${st(tp)}`,
      head: ['target', 'req/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'failed', 'CPU ms/req', 'vs nginx'],
      rows: Object.entries(res.targets as Record<string, any>).map(([name, t]) =>
        t.status === 'skipped'
          ? [name, `skipped: ${t.reason}`, null, null, null, null, null, null]
          : [
              name,
              t.rps,
              t.latency_ms?.p50,
              t.latency_ms?.p99,
              t.latency_ms?.p999,
              t.errors + t.non2xx,
              t.proxy?.cpu_ms_per_request ?? null,
              nginxRps ? ratio(t.rps, nginxRps) : null,
            ],
      ),
      notes: [
        `gateway/nginx req/s: ${res.ratios.gateway_vs_nginx_rps ?? '–'}; gateway/direct: ${res.ratios.gateway_vs_direct_rps ?? '–'}; added p99 over direct: gateway ${res.added_p99_ms.gateway ?? '–'} ms, nginx ${res.added_p99_ms.nginx ?? '–'} ms`,
        `gateway/bare: ${res.ratios.gateway_vs_bare_rps ?? '–'} = ledger/bare ${res.ratios.ledger_vs_bare_rps ?? '–'} (the hot store's reserve, settle and outbox rounds alone) × gateway/ledger ${res.ratios.gateway_vs_ledger_rps ?? '–'} (everything else the gateway does)`,
        ...tp.notes,
      ],
    });
  }
  const lt = sc('latency');
  if (lt && lt.status !== 'skipped' && lt.results.targets) {
    const res = lt.results as any;
    const added = (name: string) => res.added_ms?.[name] ?? null;
    out.push({
      title: `2. Latency at a fixed offered rate of ${res.rate_rps.toLocaleString('en-US')} req/s (${res.rate_source})${st(lt)}`,
      head: [
        'target',
        'achieved req/s',
        'p50 ms',
        'p99 ms',
        'p99.9 ms',
        'added p50',
        'added p99',
        'added p99.9',
        'failed',
        'CPU µs/req',
      ],
      rows: Object.entries(res.targets as Record<string, any>).map(([name, t]) =>
        t.status === 'skipped'
          ? [name, `skipped: ${t.reason}`, null, null, null, null, null, null, null, null]
          : [
              name,
              t.achieved_rps,
              t.latency_ms.p50,
              t.latency_ms.p99,
              t.latency_ms.p999,
              added(name)?.p50,
              added(name)?.p99,
              added(name)?.p999,
              t.errors + t.non2xx,
              t.proxy?.cpu_us_per_request ?? null,
            ],
      ),
      notes: [
        `"added" = target − direct, same client, same rate; ${res.duration_s} s measured per target.`,
        `CPU µs/req = the proxy's processes' user+system CPU over the run (warm-up included) per request offered; Redis and Postgres not counted. The client's own: ${clientCpuRange(res.targets)} µs/req.`,
        ...lt.notes,
      ],
    });
  }
  for (const [id, title] of [
    ['streams', '3. Streaming, chat surface → OpenAI upstream (pass-through)'],
    ['cross', '4. Streaming, cross-dialect: Anthropic client (/v1/messages) → OpenAI upstream'],
  ] as const) {
    const s = sc(id);
    if (!s || s.status === 'skipped' || !s.results.levels) continue;
    const rows: (string | number | null)[][] = [];
    for (const l of s.results.levels as any[]) {
      for (const [name, t] of Object.entries(l.targets as Record<string, any>)) {
        if (t.status === 'skipped') {
          rows.push([
            `${l.streams} ${name}`,
            `skipped: ${t.reason}`,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
          ]);
          continue;
        }
        const o = l.overhead?.[name];
        rows.push([
          `${l.streams} ${name}`,
          `${t.completed}/${t.requested}`,
          t.peak_open,
          t.ttft_ms.p50,
          t.ttft_ms.p99,
          t.inter_token_ms.p50,
          t.inter_token_ms.p99,
          o?.ttft_p50_ms ?? null,
          o?.inter_token_p99_ms ?? null,
          t.proxy?.rss_peak_mb ?? null,
          t.proxy?.pss_peak_mb ?? null,
          t.proxy?.kb_per_stream ?? null,
          t.proxy?.kb_per_open_stream ?? null,
          t.proxy?.cpu_s_per_million_tokens ?? null,
        ]);
      }
    }
    const first = (s.results.levels as any[])[0];
    out.push({
      title: `${title}${st(s)}`,
      head: [
        'streams target',
        'complete',
        'peak open',
        'TTFT p50',
        'TTFT p99',
        'gap p50',
        'gap p99',
        '+TTFT p50',
        '+gap p99',
        'RSS MB',
        'PSS MB',
        'KB/stream',
        'KB/open',
        'CPU s/Mtok',
      ],
      rows,
      notes: [
        `ms; ${first?.tokens_per_stream} tokens per stream${r.options.prompt_kb ? ` after a ${r.options.prompt_kb} KB prompt` : ''}, one every ${(s.results.levels as any[]).map((l) => `${l.token_interval_ms} ms (${l.streams})`).join(', ')}; streams opened at ${r.options.ramp_per_s}/s; ${warmupNote(s.results.levels as any[])}TTFT counts from dispatch (connect included); "+" = over direct; RSS = peak of the proxy's processes summed (gateway: primary + workers; pages they share, node's binary among them, count once per process), PSS = the same with each shared page split between its processes (what the tree costs the machine), KB/stream from RSS (its peak, which for a proxy that settles comes as the streams end), KB/open from the highest RSS sampled while every stream of the level was open (empty if they never all were), CPU = their user+system seconds per million tokens streamed.`,
        ...s.notes,
      ],
    });
  }
  const sl = sc('slow');
  if (sl && sl.status !== 'skipped' && sl.results.gateway) {
    const res = sl.results as any;
    out.push({
      title: `5. Slow reader: ${res.readers} clients × ${res.answer_kb} KB answers, ${res.hold_ms} ms without reading, then ${Math.round(res.read_bytes_per_s / 1024)} KB/s${st(sl)}`,
      head: ['measure', 'value'],
      rows: [
        ['answers complete (gateway)', `${res.completed}/${res.readers}`],
        [
          'upstream backpressure events (fake /_stats): direct / gateway',
          `${res.direct.backpressure_events} / ${res.upstream.backpressure_events}`,
        ],
        ['upstream paused, total ms: direct / gateway', `${res.direct.paused_ms} / ${res.upstream.paused_ms}`],
        [
          'max in flight upstream→reader, KB per reader: direct / gateway',
          `${res.direct.max_in_flight_kb_per_reader} / ${res.upstream.max_in_flight_kb_per_reader}`,
        ],
        ['gateway RSS before → peak, MB', `${res.gateway.rss_before_mb} → ${res.gateway.rss_peak_mb}`],
        ['gateway RSS growth / answer bytes', `${res.gateway.rss_growth_mb} MB / ${res.gateway.answers_total_mb} MB`],
        ['airouter_stream_buffered_bytes_max', res.gateway.buffered_bytes_max],
        ['… in chunks of the answer', res.gateway.buffered_chunks_max],
      ],
      notes: sl.notes,
    });
  }
  out.push({
    title: 'Targets (full run; reported, not asserted)',
    head: ['target', 'value', 'met'],
    rows: r.summary.targets.map((t) => [
      `${t.name}: ${t.target}`,
      t.value === null ? `– ${t.note ?? ''}`.trim() : `${t.value} ${t.unit}${t.note ? ` (${t.note})` : ''}`,
      t.met === null ? 'n/a' : t.met ? 'yes' : 'NO',
    ]),
  });
  return out;
}

function summarise(r: Report): { ratios: Record<string, number | null>; targets: TargetCheck[] } {
  const sc = (id: string) => r.scenarios.find((s) => s.id === id && s.status !== 'skipped')?.results as any;
  const tp = sc('throughput');
  const lt = sc('latency');
  const streams = sc('streams');
  const sl = sc('slow');
  const ratios: Record<string, number | null> = {
    gateway_vs_nginx_rps: tp?.ratios?.gateway_vs_nginx_rps ?? null,
    gateway_vs_direct_rps: tp?.ratios?.gateway_vs_direct_rps ?? null,
    gateway_vs_bare_rps: tp?.ratios?.gateway_vs_bare_rps ?? null,
    gateway_added_p99_ms_at_half_saturation: lt?.added_ms?.gateway?.p99 ?? null,
    nginx_added_p99_ms_at_half_saturation: lt?.added_ms?.nginx?.p99 ?? null,
  };
  for (const id of ['streams', 'cross'] as const) {
    for (const l of (sc(id)?.levels ?? []) as any[]) {
      const g = l.targets.gateway;
      if (g?.status !== 'ok') continue;
      const p = `${id}_${l.streams}`;
      ratios[`${p}_ttft_overhead_p50_ms`] = l.overhead.gateway?.ttft_p50_ms ?? null;
      ratios[`${p}_ttft_overhead_p99_ms`] = l.overhead.gateway?.ttft_p99_ms ?? null;
      ratios[`${p}_inter_token_overhead_p99_ms`] = l.overhead.gateway?.inter_token_p99_ms ?? null;
      ratios[`${p}_gateway_rss_peak_mb`] = g.proxy?.rss_peak_mb ?? null;
      ratios[`${p}_gateway_cpu_s_per_million_tokens`] = g.proxy?.cpu_s_per_million_tokens ?? null;
    }
  }
  const targets: TargetCheck[] = [];
  const v = ratios.gateway_vs_nginx_rps;
  targets.push({
    name: 'throughput',
    target: '≥ 0.4× nginx req/s',
    value: v,
    unit: '× nginx',
    met: v === null ? null : v >= 0.4,
    note: v === null ? (tp ? 'no nginx figure' : 'not run') : undefined,
  });
  const vb = ratios.gateway_vs_bare_rps;
  targets.push({
    name: 'throughput',
    target: 'within 1.5× of the bare proxy (≥ 0.67× its req/s)',
    value: vb,
    unit: '× bare',
    met: vb === null ? null : vb >= 1 / 1.5,
    note: vb === null ? (tp ? 'no bare figure' : 'not run') : undefined,
  });
  const p = ratios.gateway_added_p99_ms_at_half_saturation;
  targets.push({
    name: 'latency',
    target: 'p99 added ≤ 2 ms at half saturation (goal 1 ms)',
    value: p,
    unit: 'ms',
    met: p === null ? null : p <= 2,
    note: p === null ? 'not run' : undefined,
  });
  const levels = (streams?.levels ?? []) as any[];
  const l10k = levels.find((l) => l.streams >= 10_000 && l.targets.gateway?.status === 'ok');
  const biggest = levels.filter((l) => l.targets.gateway?.proxy).sort((a, b) => b.streams - a.streams)[0];
  if (l10k) {
    const rss = l10k.targets.gateway.proxy.rss_peak_mb;
    const pss = l10k.targets.gateway.proxy.pss_peak_mb;
    targets.push({
      name: 'memory',
      target: '10,000 concurrent paced streams < 500 MB gateway RSS',
      value: rss,
      unit: 'MB',
      met: rss < 500,
      note: pss ? `PSS ${pss} MB` : undefined,
    });
    const ttft = l10k.overhead.gateway?.ttft_p99_ms ?? null;
    targets.push({
      name: 'streams',
      target: '10,000 streams: TTFT p99 added ≤ 10 ms',
      value: ttft,
      unit: 'ms',
      met: ttft === null ? null : ttft <= 10,
    });
  } else {
    targets.push({
      name: 'memory',
      target: '10,000 concurrent paced streams < 500 MB gateway RSS',
      value: null,
      unit: 'MB',
      met: null,
      note: biggest
        ? `10,000 not run; ${biggest.streams} streams peaked at ${biggest.targets.gateway.proxy.rss_peak_mb} MB`
        : 'not run',
    });
  }
  // CPU per streamed token against nginx, at the largest level both served.
  const both = levels
    .filter(
      (l) => l.targets.gateway?.proxy?.cpu_s_per_million_tokens && l.targets.nginx?.proxy?.cpu_s_per_million_tokens,
    )
    .sort((a, b) => b.streams - a.streams)[0];
  const cpu = both
    ? Math.round(
        (both.targets.gateway.proxy.cpu_s_per_million_tokens / both.targets.nginx.proxy.cpu_s_per_million_tokens) * 100,
      ) / 100
    : null;
  targets.push({
    name: 'stream CPU',
    target: 'CPU per streamed token within 2× of nginx',
    value: cpu,
    unit: '× nginx',
    met: cpu === null ? null : cpu <= 2,
    note: both ? `${both.streams} streams` : 'no nginx figure',
  });
  const chunks = sl?.gateway?.buffered_chunks_max ?? null;
  targets.push({
    name: 'slow reader',
    target: `gateway holds ≤ ${FEW_CHUNKS} chunks for a full client`,
    value: chunks,
    unit: 'chunks',
    met: chunks === null ? null : chunks <= FEW_CHUNKS,
    note: chunks === null ? (sl ? 'no metric' : 'not run') : `${sl.gateway.buffered_bytes_max} bytes`,
  });
  return { ratios, targets };
}

// ---------------------------------------------------------------- main

const TITLES: Record<ScenarioId, string> = {
  throughput: 'Non-stream throughput at fixed concurrency (chat surface)',
  latency: 'Latency at a fixed offered rate (half saturation)',
  streams: 'Concurrent paced streams (chat surface, same dialect)',
  cross: 'Concurrent paced streams through a cross-dialect path',
  slow: 'Slow reader: bounded memory, upstream paused',
};

async function main(): Promise<number> {
  let opts: Options | 'help';
  try {
    opts = parseOptions(process.argv.slice(2), process.env, REPO_ROOT);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`bench: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (opts === 'help') {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  const startedAt = new Date();
  try {
    return await runBench(opts, startedAt);
  } catch (err) {
    // The run could not get as far as its scenarios: still leave a (failed) report behind.
    say(`bench failed: ${(err as Error)?.stack ?? String(err)}`);
    const message = (err as Error)?.message?.split('\n')[0] ?? String(err);
    const report: Report = {
      schema: REPORT_SCHEMA,
      mode: opts.quick ? 'quick' : 'full',
      ok: false,
      started_at: startedAt.toISOString(),
      finished_at: new Date().toISOString(),
      wall_s: Math.round((performance.now() - T0) / 100) / 10,
      command: commandLine(),
      machine: {
        cores: availableParallelism(),
        cpu_model: cpus()[0]?.model ?? 'unknown',
        node: process.version,
        runtime: runtime(),
      },
      setup: { gateway: { workers: opts.workers }, shared_cores: true, error: (err as Error)?.message ?? String(err) },
      options: { quick: opts.quick, scenarios: opts.scenarios },
      scenarios: opts.scenarios.map((id) => ({
        id,
        title: TITLES[id],
        status: 'failed' as const,
        error: `setup failed: ${message}`,
        notes: [],
        gateway_crashes: 0,
        wall_s: 0,
        results: {},
      })),
      summary: { ratios: {}, targets: [] },
      problems: [`setup failed: ${message}`],
    };
    const base = writeReport(report, opts, startedAt, [`setup failed: ${(err as Error)?.message ?? String(err)}`]);
    process.stdout.write(`\nbench setup failed: ${message}\nreport: ${base}.json\n`);
    return 1;
  }
}

const commandLine = () => `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;

function writeReport(report: Report, opts: Options, startedAt: Date, header: string[]): string {
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const base = opts.out ?? path.join(REPO_ROOT, 'bench', 'reports', `${stamp}${opts.quick ? '-quick' : ''}`);
  mkdirSync(path.dirname(base), { recursive: true });
  writeFileSync(`${base}.json`, JSON.stringify(report, null, 2) + '\n');
  const rendered = report.scenarios.some((s) => s.status !== 'failed' || Object.keys(s.results).length)
    ? tables(report)
    : [];
  writeFileSync(
    `${base}.md`,
    [
      `# airouter bench: ${report.mode} run, ${report.started_at}`,
      '',
      ...header.slice(1).map((h) => `- ${h}`),
      `- command: \`${report.command}\``,
      '',
      ...rendered.map((t) => renderMarkdown(t) + '\n'),
      report.problems.length
        ? `## Problems\n\n${report.problems.map((p) => `- ${p}`).join('\n')}\n`
        : '## Result\n\nEvery selected scenario ran; the report is well-formed.\n',
    ].join('\n'),
  );
  return base;
}

async function runBench(opts: Options, startedAt: Date): Promise<number> {
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
  const fakeChild = startChild({
    name: 'fake upstream',
    command: process.execPath,
    args: ['--import', 'tsx', path.join(REPO_ROOT, 'test/fake-upstream/main.ts'), '--port', '0', '--no-record'],
    cwd: REPO_ROOT,
    logFile: path.join(tmp, 'fake-upstream.log'),
    nofile,
  });
  const staticChild = startChild({
    name: 'static upstream',
    command: process.execPath,
    args: ['--import', 'tsx', path.join(REPO_ROOT, 'bench/upstream/static.ts'), '--port', '0'],
    cwd: REPO_ROOT,
    logFile: path.join(tmp, 'static-upstream.log'),
    nofile,
  });
  const [fakeLine, staticLine] = await Promise.all([
    fakeChild.waitForLine(/^listening (\S+)/, 60_000),
    staticChild.waitForLine(/^listening (\S+)/, 60_000),
  ]);
  const fake = fakeLine[1]!;
  const stat = staticLine[1]!;
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
  const barePort = await freePort();
  const bareChild = startChild({
    name: 'bare proxy',
    command: process.execPath,
    args: [
      '--import',
      'tsx',
      path.join(REPO_ROOT, 'bench/upstream/bare-proxy.ts'),
      '--port',
      String(barePort),
      '--processes',
      String(workers),
      '--route',
      `/s=${stat}`,
      '--route',
      `/f=${fake}`,
      '--connections',
      String(maxPerWorker),
    ],
    cwd: REPO_ROOT,
    logFile: path.join(tmp, 'bare-proxy.log'),
    nofile,
  });
  await bareChild.waitForLine(/^listening /, 60_000);
  const bare = `http://127.0.0.1:${barePort}`;
  say(
    `bare proxy (uWS + the gateway's upstream client, no gateway work) ${bare}, ${workers} process${workers > 1 ? 'es' : ''}`,
  );
  // The same, plus the gateway's hot-store work per request, on the hot store the gateway has.
  const ledgerPort = await freePort();
  const ledgerStore = stores.env.REDIS_URL
    ? ['--ledger', stores.env.REDIS_URL, '--ledger-prefix', `${stores.env.REDIS_PREFIX}ledger:`]
    : ['--ledger', 'memory'];
  // The same holds as the gateway's: from leases unless it runs without them.
  if (process.env.LEASE_WINDOW_MS === '0') ledgerStore.push('--ledger-no-lease');
  // With --profile the ledger proxy is profiled too (DIR/ledger): the floor the gateway's profile is read against.
  const ledgerProfile = opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(opts.profileDir, 'ledger')}`] : [];
  const ledgerChild = startChild({
    name: 'ledger proxy',
    command: process.execPath,
    args: [
      ...ledgerProfile,
      '--import',
      'tsx',
      path.join(REPO_ROOT, 'bench/upstream/bare-proxy.ts'),
      '--port',
      String(ledgerPort),
      '--processes',
      String(workers),
      '--route',
      `/s=${stat}`,
      '--route',
      `/f=${fake}`,
      '--connections',
      String(maxPerWorker),
      ...ledgerStore,
    ],
    cwd: REPO_ROOT,
    logFile: path.join(tmp, 'ledger-proxy.log'),
    nofile,
  });
  // Stopped before the stores are cleaned up: its outbox reader would make its stream again.
  cleanups.push(() => ledgerChild.stop());
  await ledgerChild.waitForLine(/^listening /, 60_000);
  const ledger = `http://127.0.0.1:${ledgerPort}`;
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

  const scenarios: ScenarioReport[] = [];
  const runners: Record<ScenarioId, () => Promise<ScenarioOutcome>> = {
    throughput: () => scenarioThroughput(b),
    latency: () => scenarioLatency(b),
    streams: () => streamLevels(b, 'same'),
    cross: () => streamLevels(b, 'cross'),
    slow: () => scenarioSlowReader(b),
  };
  for (const id of ['throughput', 'latency', 'streams', 'cross', 'slow'] as const) {
    if (!opts.scenarios.includes(id)) {
      scenarios.push({
        id,
        title: TITLES[id],
        status: 'skipped',
        notes: ['not selected (--scenarios)'],
        gateway_crashes: 0,
        wall_s: 0,
        results: {},
      });
      continue;
    }
    if (interrupted) break;
    const started = performance.now();
    const crashesBefore = gateway.crashes;
    const notesBefore = gateway.crashNotes.length;
    const report: ScenarioReport = {
      id,
      title: TITLES[id],
      status: 'ok',
      notes: [],
      gateway_crashes: 0,
      wall_s: 0,
      results: {},
    };
    say(`── ${TITLES[id]}`);
    try {
      await gateway.ensureRunning();
      const outcome = await runners[id]();
      report.results = outcome.results;
      report.notes.push(...outcome.notes);
      if (outcome.failures.length) {
        report.status = 'failed';
        report.error = outcome.failures.join('; ');
      }
    } catch (err) {
      report.status = 'failed';
      report.error = (err as Error).message;
      say(`${id} failed: ${(err as Error).stack ?? err}`);
    }
    await sleep(300);
    report.gateway_crashes = gateway.crashes - crashesBefore;
    if (report.gateway_crashes > 0) {
      report.status = 'failed';
      const why = `the gateway crashed ${report.gateway_crashes} time(s) during this scenario`;
      report.error = report.error ? `${why}; ${report.error}` : why;
      report.notes.push(...gateway.crashNotes.slice(notesBefore, notesBefore + 3));
    }
    report.wall_s = Math.round((performance.now() - started) / 100) / 10;
    if (report.status === 'failed') say(`${id}: FAILED: ${report.error}`);
    scenarios.push(report);
  }

  // ---- the report
  const gitHead = await runCommand('git', ['-C', opts.gatewayRoot, 'rev-parse', '--short', 'HEAD']).catch(() => null);
  const gitDirty = await runCommand('git', ['-C', opts.gatewayRoot, 'status', '--porcelain', '--', 'src']).catch(
    () => null,
  );
  const finishedAt = new Date();
  const loadgen = wrk
    ? `${wrk.version} (${opts.wrkThreads} thread${opts.wrkThreads > 1 ? 's' : ''})`
    : autocannonVersion();
  const report: Report = {
    schema: REPORT_SCHEMA,
    mode: opts.quick ? 'quick' : 'full',
    ok: false,
    started_at: startedAt.toISOString(),
    finished_at: finishedAt.toISOString(),
    wall_s: Math.round((performance.now() - T0) / 100) / 10,
    command: commandLine(),
    machine: {
      cores,
      cpu_model: cpus()[0]?.model ?? 'unknown',
      memory_gb: Math.round(totalmem() / 1024 ** 3),
      kernel: release(),
      node: process.version,
      runtime: runtime(),
      fd_limits: `${fdNote}; ${childFd}`,
      load_average_before: Math.round(loadBefore * 100) / 100,
      load_average_after: Math.round(loadavg()[0]! * 100) / 100,
      load_note:
        loadBefore > cores * 0.5
          ? `the machine was already busy (load ${loadBefore.toFixed(1)} on ${cores} cores) when the run started: figures are skewed by other work`
          : null,
    },
    setup: {
      gateway: {
        command: [entry.command.split(' ')[0], ...opts.gatewayNodeArgs, ...entry.command.split(' ').slice(1)].join(' '),
        root: opts.gatewayRoot,
        commit:
          gitHead?.code === 0
            ? gitHead.stdout.trim() + (gitDirty?.stdout.trim() ? ' + uncommitted changes in src/' : '')
            : 'unknown',
        workers,
        workers_requested: opts.workers,
        workers_note:
          embedded && opts.workers > 1
            ? 'the embedded stores allow one process; set DATABASE_URL and REDIS_URL to use every core'
            : null,
        stores: { ...stores.kind, description: stores.description },
        env: {
          LOG_LEVEL: 'warn',
          UPSTREAM_CONNECTIONS: gatewayEnv.UPSTREAM_CONNECTIONS,
          USAGE_FLUSH_MS: 'default',
          SHUTDOWN_TIMEOUT_MS: '3000',
        },
        starts: gateway.starts,
        idle_rss_mb: {
          processes: idleRss,
          total: Math.round(idleRss.reduce((n, p) => n + p.rss_mb, 0) * 10) / 10,
          pss_total: Math.round(idleRss.reduce((n, p) => n + p.pss_mb, 0) * 10) / 10,
          note: workers > 1 ? 'the first process is the cluster primary' : null,
        },
        profiles: opts.profileDir,
      },
      upstreams: {
        fake: `test/fake-upstream (node:http), own process, pid ${fakeChild.pid}`,
        static: `bench/upstream/static.ts (uWebSockets.js), own process, pid ${staticChild.pid}`,
      },
      nginx:
        nginx && nginxInfo
          ? {
              version: nginxInfo.version,
              workers,
              config: 'keepalive upstream, proxy_buffering off, proxy_http_version 1.1',
            }
          : { skipped: nginxSkipped },
      load_generators: {
        closed_loop: loadgen,
        open_loop: 'bench open-loop client (undici Pool, fixed schedule, µs timing)',
        streams: 'bench stream client (undici Pool, one connection per stream)',
        process: 'wrk in its own process; the undici clients (and autocannon) run in the bench process',
      },
      shared_cores: true,
      sharing_note: `Load generators, both upstreams, nginx and the gateway's ${workers} worker(s) all run on this machine's ${cores} cores, unpinned: they compete for CPU, so figures compare paths under the same conditions rather than state capacity.`,
    },
    options: {
      quick: opts.quick,
      scenarios: opts.scenarios,
      duration_s: opts.durationS,
      warmup_s: opts.warmupS,
      concurrency: opts.concurrency,
      rate: opts.rate,
      stream_levels: opts.streamLevels,
      tokens_per_stream: opts.tokensPerStream,
      prompt_kb: opts.promptKb,
      ramp_per_s: opts.rampPerSecond,
      token_interval_ms: opts.tokenIntervalMs ?? 'derived: max(20, streams/10)',
      slow_readers: opts.slowReaders,
      slow_answer_kb: opts.slowAnswerKb,
    },
    scenarios,
    summary: { ratios: {}, targets: [] },
    problems: [],
  };
  report.summary = summarise(report);
  for (const s of scenarios) if (s.status === 'failed') report.problems.push(`${s.id}: ${s.error}`);
  if (interrupted) report.problems.push('interrupted');
  const shape = validateReport(report);
  report.problems.push(...shape.map((p) => `report: ${p}`));
  report.ok = report.problems.length === 0;

  const rendered = tables(report);
  const header = [
    `airouter bench (${report.mode}) ${report.started_at}, ${report.wall_s} s`,
    `machine: ${cores} cores (${report.machine.cpu_model}), ${report.machine.memory_gb} GB, ${runtimeText(runtime())}; load average before ${loadBefore.toFixed(2)}${report.machine.load_note ? ' (BUSY: figures skewed)' : ''}`,
    `gateway: ${(report.setup.gateway as { command: string }).command}, ${workers} worker(s), commit ${(report.setup.gateway as { commit: string }).commit}; stores: ${stores.description}`,
    `load: ${loadgen} closed loop; bench undici clients for fixed rate and streams; nginx: ${nginx && nginxInfo ? `${nginxInfo.version}, ${workers} worker process${workers > 1 ? 'es' : ''}` : nginxSkipped}`,
    `note: ${(report.setup as { sharing_note: string }).sharing_note}`,
  ];
  const base = writeReport(report, opts, startedAt, header);
  process.stdout.write('\n' + header.join('\n') + '\n\n' + rendered.map(renderText).join('\n\n') + '\n\n');
  if (report.problems.length)
    process.stdout.write(`PROBLEMS:\n${report.problems.map((p) => `  - ${p}`).join('\n')}\n\n`);
  process.stdout.write(`report: ${base}.json\n        ${base}.md\n`);
  return report.ok ? 0 : 1;
}

main()
  .then(
    (code) => code,
    (err: unknown) => {
      say(`bench failed: ${(err as Error)?.stack ?? String(err)}`);
      return 1;
    },
  )
  .then(async (code) => {
    await cleanup();
    process.exit(code);
  });
