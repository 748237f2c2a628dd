// The report's summary: the ratios against the baselines and the targets, met or not.

import { type Report, type TargetCheck } from '../lib/report.js';
import { FEW_CHUNKS } from './context.js';

export function summarise(r: Report): { ratios: Record<string, number | null>; targets: TargetCheck[] } {
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
