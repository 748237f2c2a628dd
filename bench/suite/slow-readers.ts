// The slow-reader scenario: clients that read nothing for a while, then slowly; what the gateway
// holds for them and whether the upstream was paused.

import { BENCH_MODEL } from '../lib/gateway.js';
import { getJson, scrapeMax, sleep } from '../lib/http.js';
import { mb, UsageWindow } from '../lib/proc.js';
import { slowRead, type SlowReadProgress } from '../lib/slow-reader.js';
import { Bench, OPERATOR, ScenarioOutcome, say, ticker } from './context.js';
import { fakeIdle } from './targets.js';

interface FakeStats {
  bytesWritten: number;
  backpressureEvents: number;
  pausedMs: number;
  streams: number;
}

/** Slow readers against one origin; the fake's counters tell what the upstream went through. */
export async function slowReaders(
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

export async function scenarioSlowReader(b: Bench): Promise<ScenarioOutcome> {
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
