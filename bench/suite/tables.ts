// The report as tables, one per scenario, for the terminal and the markdown report.

import { type Report, type ScenarioReport, type Table } from '../lib/report.js';
import { ratio } from '../lib/stats.js';

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

export function tables(r: Report): Table[] {
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
