// The stream client: many concurrent streamed requests over one undici Pool (one connection
// per stream), opened over a ramp, each timed from dispatch to its first token (TTFT) and
// between tokens (inter-token gaps). Tokens are found by a byte marker in the raw body, with no
// JSON parsing, so the client stays cheap at 10,000 streams on a machine it shares.

import { Pool } from 'undici';
import { Samples, type Summary } from './stats.js';

export interface StreamRequest {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Bytes that appear once per token event in the answer. */
  marker: string;
}

export interface StreamProgress {
  started: number;
  open: number;
  completed: number;
  failed: number;
  tokens: number;
}

export interface StreamRunResult {
  requested: number;
  completed: number;
  /** Completed, but with fewer or more tokens than expected. */
  wrongTokenCount: number;
  failed: number;
  timedOut: number;
  tokens: number;
  expectedTokens: number;
  peakOpen: number;
  wallS: number;
  ttftMs: Summary;
  interTokenMs: Summary;
  firstErrors: string[];
}

function countOf(hay: Buffer, needle: Buffer): number {
  let n = 0;
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + needle.length)) n++;
  return n;
}

export async function runStreams(opts: {
  request: StreamRequest;
  count: number;
  rampMs: number;
  tokensPerStream: number;
  deadlineMs: number;
  progress?: StreamProgress;
}): Promise<StreamRunResult> {
  const { request, count } = opts;
  const marker = Buffer.from(request.marker);
  const keep = marker.length - 1;
  const pool = new Pool(request.origin, {
    connections: count,
    pipelining: 1,
    connect: { timeout: 30_000 },
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
    keepAliveTimeout: 60_000,
  });
  const headers = { 'content-type': 'application/json', ...request.headers };
  const ttft = new Samples(count);
  const gaps = new Samples(count * Math.max(1, opts.tokensPerStream - 1));
  const progress: StreamProgress = opts.progress ?? { started: 0, open: 0, completed: 0, failed: 0, tokens: 0 };
  let wrongTokenCount = 0;
  let timedOut = 0;
  let peakOpen = 0;
  let deadlinePassed = false;
  const firstErrors: string[] = [];
  const noteError = (msg: string) => {
    if (firstErrors.length < 5 && !firstErrors.includes(msg)) firstErrors.push(msg);
  };

  const one = (): Promise<void> => {
    const start = performance.now();
    let last = 0;
    let tokens = 0;
    let tail: Buffer | null = null;
    progress.started++;
    progress.open++;
    if (progress.open > peakOpen) peakOpen = progress.open;
    const done = (failure?: string) => {
      progress.open--;
      if (failure === undefined) {
        progress.completed++;
        if (tokens !== opts.tokensPerStream) wrongTokenCount++;
      } else {
        progress.failed++;
        if (deadlinePassed) timedOut++;
        noteError(deadlinePassed ? `deadline passed (${failure})` : failure);
      }
    };
    return pool
      .request({ path: request.path, method: 'POST', headers, body: request.body })
      .then(
        (res) =>
          new Promise<void>((resolve) => {
            if (res.statusCode !== 200) {
              res.body.text().then(
                (t) => (done(`status ${res.statusCode}: ${t.slice(0, 200)}`), resolve()),
                () => (done(`status ${res.statusCode}`), resolve()),
              );
              return;
            }
            res.body.on('data', (chunk: Buffer) => {
              const now = performance.now();
              let n = countOf(chunk, marker);
              if (tail !== null && keep > 0) n += countOf(Buffer.concat([tail, chunk.subarray(0, keep)]), marker);
              tail =
                chunk.length >= keep
                  ? chunk.subarray(chunk.length - keep)
                  : Buffer.concat([tail ?? Buffer.alloc(0), chunk]).subarray(-keep);
              for (let i = 0; i < n; i++) {
                if (tokens === 0) ttft.add(now - start);
                else gaps.add(now - last);
                last = now;
                tokens++;
              }
              progress.tokens += n;
            });
            res.body.once('end', () => (done(), resolve()));
            res.body.once('error', (err: Error) => (done(err.message), resolve()));
          }),
      )
      .catch((err: Error) => done(`${(err as { code?: string }).code ?? 'error'}: ${err.message}`));
  };

  const t0 = performance.now();
  const all: Promise<void>[] = [];
  const deadline = setTimeout(() => {
    deadlinePassed = true;
    void pool.destroy();
  }, opts.deadlineMs);
  await new Promise<void>((resolve) => {
    let started = 0;
    const tick = () => {
      const elapsed = performance.now() - t0;
      const due = opts.rampMs <= 0 ? count : Math.min(count, Math.floor((elapsed / opts.rampMs) * count) + 1);
      while (started < due && !deadlinePassed) {
        all.push(one());
        started++;
      }
      if (started >= count || deadlinePassed) resolve();
      else setTimeout(tick, 2);
    };
    tick();
  });
  await Promise.all(all);
  clearTimeout(deadline);
  const wallS = (performance.now() - t0) / 1000;
  await pool.close().catch(() => {});
  return {
    requested: count,
    completed: progress.completed,
    wrongTokenCount,
    failed: progress.failed + (count - progress.started),
    timedOut,
    tokens: progress.tokens,
    expectedTokens: count * opts.tokensPerStream,
    peakOpen,
    wallS: Math.round(wallS * 100) / 100,
    ttftMs: ttft.summary(),
    interTokenMs: gaps.summary(),
    firstErrors,
  };
}
