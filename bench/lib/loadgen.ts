// Non-stream load. Closed loop (fixed concurrency, as fast as answers come back): wrk when it
// is installed (C, microsecond latencies, a fraction of a core), else autocannon's programmatic
// API (in this process, millisecond latency resolution). Open loop (a fixed offered rate): a
// small undici client below, because autocannon's rate limit releases each second's quota in
// one burst and wrk cannot hold a rate at all; it times every request to the microsecond.

import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Pool } from 'undici';
import autocannon from 'autocannon';
import { openLoopSchedule } from './schedule.js';
import { Samples, type Summary } from './stats.js';

export interface HttpTarget {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface ClosedLoopResult {
  tool: string;
  connections: number;
  durationS: number;
  requests: number;
  rps: number;
  /** Milliseconds. */
  latency: {
    p50: number | null;
    p90: number | null;
    p99: number | null;
    p999: number | null;
    max: number | null;
    mean: number | null;
  };
  latencyResolutionMs: number;
  errors: number;
  non2xx: number;
}

export function findWrk(): { binary: string; version: string } | null {
  const binary = process.env.WRK_BIN ?? 'wrk';
  try {
    execFileSync(binary, ['--version'], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { code?: string; stdout?: Buffer; stderr?: Buffer };
    if (e.code === 'ENOENT') return null;
    // `wrk --version` prints its banner and exits 1.
    const text = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    const m = /^wrk\s+(\S+)/m.exec(text);
    if (m) return { binary, version: `wrk ${m[1]!.replace(/^debian\//, '')}` };
    return null;
  }
  return { binary, version: 'wrk' };
}

const AUTOCANNON_VERSION = '9';

export function autocannonVersion(): string {
  return `autocannon ${AUTOCANNON_VERSION}`;
}

const luaString = (s: string) => {
  let eq = '';
  while (s.includes(`]${eq}]`)) eq += '=';
  return `[${eq}[${s}]${eq}]`;
};

export async function wrkClosedLoop(opts: {
  binary: string;
  version: string;
  dir: string;
  target: HttpTarget;
  connections: number;
  durationS: number;
  threads: number;
}): Promise<ClosedLoopResult> {
  const script = path.join(opts.dir, `wrk-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.lua`);
  const headerLines = Object.entries({ 'content-type': 'application/json', ...opts.target.headers })
    .map(([k, v]) => `wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`)
    .join('\n');
  writeFileSync(
    script,
    `wrk.method = "POST"
wrk.body = ${luaString(opts.target.body)}
${headerLines}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('BENCHJSON {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%.1f,"p90":%.1f,"p99":%.1f,"p999":%.1f,"max":%.1f,"mean":%.1f}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean))
end
`,
  );
  const threads = Math.max(1, Math.min(opts.threads, opts.connections));
  const args = [
    '-t',
    String(threads),
    '-c',
    String(opts.connections),
    '-d',
    `${opts.durationS}s`,
    '--timeout',
    '10s',
    '-s',
    script,
    opts.target.url,
  ];
  const out = await new Promise<string>((resolve, reject) => {
    const p = spawn(opts.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    p.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), (opts.durationS + 30) * 1000);
    p.on('error', reject);
    p.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`wrk exited ${code}: ${stderr.trim() || stdout.trim()}`));
    });
  });
  const line = out.split('\n').find((l) => l.startsWith('BENCHJSON '));
  if (!line) throw new Error(`wrk printed no result: ${out.slice(-500)}`);
  const r = JSON.parse(line.slice('BENCHJSON '.length)) as Record<string, number>;
  const durationS = r.duration_us! / 1e6;
  const ms = (us: number | undefined) => (us === undefined ? null : Math.round(us) / 1000);
  return {
    tool: opts.version,
    connections: opts.connections,
    durationS: Math.round(durationS * 100) / 100,
    requests: r.requests!,
    rps: Math.round(r.requests! / durationS),
    latency: { p50: ms(r.p50), p90: ms(r.p90), p99: ms(r.p99), p999: ms(r.p999), max: ms(r.max), mean: ms(r.mean) },
    latencyResolutionMs: 0.001,
    errors: r.connect! + r.read! + r.write! + r.timeout!,
    non2xx: r.status!,
  };
}

export async function autocannonClosedLoop(opts: {
  target: HttpTarget;
  connections: number;
  durationS: number;
}): Promise<ClosedLoopResult> {
  const result = await autocannon({
    url: opts.target.url,
    method: 'POST',
    connections: opts.connections,
    duration: opts.durationS,
    headers: { 'content-type': 'application/json', ...opts.target.headers },
    body: opts.target.body,
    timeout: 10,
  });
  const lat = result.latency;
  return {
    tool: autocannonVersion(),
    connections: opts.connections,
    durationS: result.duration,
    requests: result.requests.total,
    rps: Math.round(result.requests.total / result.duration),
    latency: { p50: lat.p50, p90: lat.p90, p99: lat.p99, p999: lat.p99_9, max: lat.max, mean: lat.mean },
    latencyResolutionMs: 1,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

export interface OpenLoopResult {
  rate: number;
  durationS: number;
  sent: number;
  ok: number;
  errors: number;
  non2xx: number;
  achievedRps: number;
  /** Milliseconds, from handing the request to the pool to the last byte of the answer. */
  latency: Summary;
  /** How late the client itself dispatched requests (event-loop lag): a health check of the figures. */
  dispatchLagMs: { p99: number | null; max: number | null };
  /** Most requests waiting in the client's pool for a free connection (0 = latency is all server). */
  maxQueuedInClient: number;
  /** Most requests outstanding at once. */
  maxInFlight: number;
  /** Every request offered, the warm-up's included: what the target's CPU over the run served. */
  offered: number;
  /** This client's own CPU over the run (user + system), warm-up included. */
  clientCpuS: number;
  firstError?: string;
}

/**
 * Offers `rate` requests per second for `durationS`, after `warmupS` whose samples are dropped
 * and during which the rate rises evenly from zero. The schedule is fixed in advance, so a slow
 * answer never delays the next request: no coordinated omission from the client side.
 *
 * The ramp is there because a cold client is itself a burst: at full rate from the first
 * millisecond, a fresh pool opens hundreds of connections while its own code is not compiled
 * yet, and even the bare proxy then took 0.5 to 1.2 s to drain what queued meanwhile (the
 * gateway, slower per request, longer than the warm-up), so the figure measured the start.
 */
export async function openLoop(opts: {
  target: HttpTarget;
  rate: number;
  durationS: number;
  warmupS: number;
  connections: number;
}): Promise<OpenLoopResult> {
  const url = new URL(opts.target.url);
  const pool = new Pool(url.origin, {
    connections: opts.connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const headers = { 'content-type': 'application/json', ...opts.target.headers };
  const cpuBefore = process.cpuUsage();
  const latency = new Samples(Math.ceil(opts.rate * opts.durationS) + 16);
  const lag = new Samples(Math.ceil(opts.rate * opts.durationS) + 16);
  let sent = 0;
  let ok = 0;
  let errors = 0;
  let non2xx = 0;
  let firstError: string | undefined;
  const inflight = new Set<Promise<void>>();
  let maxQueued = 0;
  let maxInFlight = 0;
  const { warmupMs, warmupCount, total, dueAt } = openLoopSchedule(opts.rate, opts.warmupS, opts.durationS);
  const t0 = performance.now() + 5;
  let next = 0;

  const fire = (i: number, due: number) => {
    const measured = i >= warmupCount;
    const start = performance.now();
    if (measured) {
      sent++;
      lag.add(start - due);
    }
    const p = pool
      .request({ path: url.pathname, method: 'POST', headers, body: opts.target.body })
      .then(async (res) => {
        await res.body.dump({ limit: Infinity });
        const ms = performance.now() - start;
        if (!measured) return;
        if (res.statusCode >= 200 && res.statusCode < 300) {
          ok++;
          latency.add(ms);
        } else {
          non2xx++;
          firstError ??= `status ${res.statusCode}`;
        }
      })
      .catch((err: Error) => {
        if (!measured) return;
        errors++;
        firstError ??= err.message;
      })
      .finally(() => inflight.delete(p));
    inflight.add(p);
    if (measured) {
      if (inflight.size > maxInFlight) maxInFlight = inflight.size;
      // One request per connection: whatever is outstanding past the connections waits for one.
      // (Not pool.stats: it walks every connection. With 632 open, 24 µs a call, 15% of a core at
      // 6,300 req/s, paid exactly when a target fell behind and the client can least afford it.)
      const queued = inflight.size - opts.connections;
      if (queued > maxQueued) maxQueued = queued;
    }
  };

  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < total) {
        const due = t0 + dueAt(next);
        if (due > now) break;
        fire(next, due);
        next++;
      }
      if (next >= total) return resolve();
      const wait = t0 + dueAt(next) - performance.now();
      setTimeout(tick, Math.max(0, Math.min(wait, 1)));
    };
    setTimeout(tick, 5);
  });
  const ended = performance.now();
  await Promise.all([...inflight]);
  await pool.close();
  const cpu = process.cpuUsage(cpuBefore);
  const measuredS = (ended - (t0 + warmupMs)) / 1000;
  const lagSum = lag.summary();
  return {
    rate: opts.rate,
    durationS: Math.round(measuredS * 100) / 100,
    sent,
    ok,
    errors,
    non2xx,
    achievedRps: Math.round(sent / measuredS),
    latency: latency.summary(),
    dispatchLagMs: { p99: lagSum.p99, max: lagSum.max },
    maxQueuedInClient: maxQueued,
    maxInFlight,
    offered: next,
    clientCpuS: (cpu.user + cpu.system) / 1e6,
    firstError,
  };
}
