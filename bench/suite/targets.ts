// The paths a scenario measures (direct, nginx, bare, ledger, gateway), for plain requests and
// for streams, and how a closed loop is driven against one.

import { BENCH_MODEL, STATIC_MODEL } from '../lib/gateway.js';
import { getJson, sleep } from '../lib/http.js';
import { autocannonClosedLoop, wrkClosedLoop, type ClosedLoopResult, type HttpTarget } from '../lib/loadgen.js';
import { TreeSampler, waitQuiet } from '../lib/proc.js';
import { type StreamRequest } from '../lib/streams.js';
import { Bench, say } from './context.js';

const chatBody = (model: string) =>
  JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello in one sentence.' }] });

export function nonStreamTargets(
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

export function streamTargets(
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

export const TARGET_NAMES = ['direct', 'nginx', 'bare', 'ledger', 'gateway'] as const;

/**
 * One target of a scenario, built just before it runs: a gateway that died during an earlier
 * target is started again first (the crash is already on this scenario's record), so one crash
 * does not fail every later measurement too.
 */
export async function targetOf<T extends { name: string }>(
  b: Bench,
  name: string,
  all: () => T[],
): Promise<T | undefined> {
  if (name === 'gateway') {
    await b.gateway.ensureRunning();
    // Start from an idle gateway, not one still finishing the previous run's work.
    const waited = await waitQuiet(b.gateway.sampler, { maxMs: b.opts.quick ? 2000 : 15_000 });
    if (waited > 1000) say(`gateway busy with earlier work: waited ${(waited / 1000).toFixed(1)} s for it to go idle`);
  }
  return all().find((t) => t.name === name);
}

export async function closedLoop(b: Bench, target: HttpTarget, durationS: number): Promise<ClosedLoopResult> {
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
export async function fakeIdle(b: Bench, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const s = await getJson<{ active: number }>(`${b.fake}/_stats`).catch(() => ({ active: 0 }));
    if (s.active <= 0) return;
    await sleep(200);
  }
}
