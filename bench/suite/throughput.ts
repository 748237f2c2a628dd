// The non-stream scenarios: throughput at a fixed concurrency, and latency at a fixed offered
// rate (half of the gateway's saturation).

import { openLoop } from '../lib/loadgen.js';
import { UsageWindow } from '../lib/proc.js';
import { minus, perRequestUs, ratio } from '../lib/stats.js';
import { Bench, MAX_FAILURE_SHARE, ScenarioOutcome, say } from './context.js';
import { TARGET_NAMES, closedLoop, nonStreamTargets, targetOf } from './targets.js';

export async function scenarioThroughput(b: Bench): Promise<ScenarioOutcome> {
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

export async function scenarioLatency(b: Bench): Promise<ScenarioOutcome> {
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
