// The stream scenarios: levels of concurrent paced streams, through the same dialect or across
// two, with each path's time to first token, gaps, memory and CPU.

import { intervalFor } from '../lib/options.js';
import { mb, UsageWindow } from '../lib/proc.js';
import { minus } from '../lib/stats.js';
import { runStreams, type StreamProgress } from '../lib/streams.js';
import { Bench, MAX_FAILURE_SHARE, ScenarioOutcome, say, ticker } from './context.js';
import { fakeIdle, streamTargets, targetOf } from './targets.js';

const kbPerStream = (rssMb: number, baseMb: number, streams: number) =>
  Math.round(((rssMb - baseMb) * 1024 * 10) / streams) / 10;

export async function streamLevels(b: Bench, kind: 'same' | 'cross'): Promise<ScenarioOutcome> {
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
