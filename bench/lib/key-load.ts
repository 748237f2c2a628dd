// One closed loop of requests against the gateway (bench/lib/data-keys.ts): `connections`
// loops, each sending its next request when its last answer is read. A loop can run in slices
// that add up, so that two loops can take turns (one key, then new keys, then one key again…):
// a machine that slows down for a while then slows both, and their ratio is not the slowdown's.

import { Pool } from 'undici';
import { Samples, type Summary } from './stats.js';

export interface KeyLoad {
  /** What the run was. */
  what: string;
  connections: number;
  requests: number;
  /** Distinct keys presented. */
  keys: number;
  seconds: number;
  rps: number;
  latency: Summary;
  /** Answers other than 200, by status (or error message). */
  failures: Record<string, number>;
  /** req/s of each slice, when it ran in more than one. */
  sliceRps?: number[];
  /**
   * With `waves`: the first request of every connection (sent at once to a process that has
   * served nothing yet) apart from every request after them.
   */
  waves?: { first: Summary; later: Summary };
  /** CPU µs a request, by process (the gateway, Postgres, Redis, this load generator), when measured. */
  cpuUsPerRequest?: Record<string, number>;
  /** What the loop wrote to Postgres' WAL, a request, and the checkpoints during it, when measured. */
  wal?: { bytesPerRequest: number; fullPagesPerRequest: number; checkpoints: number };
  /** Redis commands a request (those scripts run included) and script calls a request, when measured. */
  redis?: { commandsPerRequest: number; scriptCallsPerRequest: number };
}

/** CPU seconds so far, by process: what a loop's requests cost each part of the machine. */
export type CpuClock = () => Record<string, number>;

/**
 * Postgres' WAL so far (pg_stat_wal) and its checkpoints: a key never seen writes index pages
 * at random places, and each page's first change after a checkpoint goes to the WAL whole.
 */
export type WalClock = () => Promise<{ bytes: number; fullPages: number; checkpoints: number }>;

/** Redis' commands so far (INFO commandstats): the commands scripts run count as commands too. */
export type RedisClock = () => Promise<{ commands: number; scriptCalls: number }>;

export interface KeyLoadOptions {
  url: string;
  what: string;
  connections: number;
  /** The secret of the i-th request; `keys` distinct ones in all. */
  secretOf: (i: number) => string;
  keys: number;
  /** Stop after this many requests (default: no count limit). */
  requests?: number;
  /** Stop after this long (default: no time limit). */
  seconds?: number;
  model: string;
  /** Time the first request of each connection apart (KeyLoad.waves). */
  waves?: boolean;
  cpu?: CpuClock;
  wal?: WalClock;
  redis?: RedisClock;
}

type Totals = Record<string, number>;

const addTo = (sum: Totals, before: Totals | undefined, after: Totals | undefined) => {
  if (!before || !after) return;
  for (const k of Object.keys(after)) sum[k] = (sum[k] ?? 0) + after[k]! - (before[k] ?? 0);
};

/** A loop that runs in slices (`run`), each going on where the last stopped; `result` adds them up. */
export class KeyLoadRun {
  private readonly latency: Samples;
  private readonly waves?: { first: Samples; later: Samples };
  private readonly failures: Record<string, number> = {};
  private readonly limit: number;
  private readonly body: string;
  private next = 0;
  private seconds = 0;
  private readonly sliceRps: number[] = [];
  private readonly cpu: Totals = {};
  private readonly wal: Totals = {};
  private readonly redis: Totals = {};

  constructor(private readonly opts: Omit<KeyLoadOptions, 'seconds'>) {
    this.limit = opts.requests ?? Number.MAX_SAFE_INTEGER;
    this.latency = new Samples(Math.min(this.limit, 1 << 16));
    if (opts.waves)
      this.waves = { first: new Samples(opts.connections), later: new Samples(Math.min(this.limit, 1 << 16)) };
    this.body = JSON.stringify({
      model: opts.model,
      messages: [{ role: 'user', content: 'Say hello.' }],
      max_tokens: 16,
    });
  }

  /** Every answer must be a 200: a refusal is a failure, not a fast answer. */
  async run(seconds?: number): Promise<void> {
    const { opts } = this;
    const pool = new Pool(new URL(opts.url).origin, {
      connections: opts.connections,
      pipelining: 1,
      keepAliveTimeout: 60_000,
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    });
    const answeredBefore = this.latency.count;
    const walBefore = await opts.wal?.();
    const redisBefore = await opts.redis?.();
    const cpuBefore = opts.cpu?.();
    const start = performance.now();
    const deadline = seconds === undefined ? Infinity : start + seconds * 1000;
    const loop = async () => {
      while (this.next < this.limit && performance.now() < deadline) {
        const i = this.next++;
        const t = performance.now();
        let status: string;
        try {
          const res = await pool.request({
            path: '/v1/chat/completions',
            method: 'POST',
            headers: { authorization: `Bearer ${opts.secretOf(i % opts.keys)}`, 'content-type': 'application/json' },
            body: this.body,
          });
          await res.body.dump({ limit: Infinity });
          status = String(res.statusCode);
        } catch (err) {
          status = (err as Error).message.slice(0, 80);
        }
        if (status === '200') {
          const ms = performance.now() - t;
          this.latency.add(ms);
          if (this.waves) (i < opts.connections ? this.waves.first : this.waves.later).add(ms);
        } else this.failures[status] = (this.failures[status] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: opts.connections }, loop));
    const took = (performance.now() - start) / 1000;
    addTo(this.cpu, cpuBefore, opts.cpu?.());
    addTo(this.wal, walBefore, await opts.wal?.());
    addTo(this.redis, redisBefore, await opts.redis?.());
    await pool.close();
    this.seconds += took;
    this.sliceRps.push(Math.round((this.latency.count - answeredBefore) / took));
  }

  result(): KeyLoad {
    const { opts, next: n } = this;
    const per = (v: number, digits: number) => Math.round((v / n) * 10 ** digits) / 10 ** digits;
    return {
      what: opts.what,
      connections: opts.connections,
      requests: n,
      keys: Math.min(n, opts.keys),
      seconds: Math.round(this.seconds * 1000) / 1000,
      // Answered requests only: a refusal is quick, and would pass for throughput.
      rps: Math.round(this.latency.count / this.seconds),
      latency: this.latency.summary(),
      failures: this.failures,
      sliceRps: this.sliceRps.length > 1 ? this.sliceRps : undefined,
      waves: this.waves && { first: this.waves.first.summary(), later: this.waves.later.summary() },
      cpuUsPerRequest:
        opts.cpu && n > 0
          ? Object.fromEntries(Object.entries(this.cpu).map(([k, v]) => [k, Math.round((v * 1e6) / n)]))
          : undefined,
      wal:
        opts.wal && n > 0
          ? {
              bytesPerRequest: Math.round(this.wal.bytes! / n),
              fullPagesPerRequest: per(this.wal.fullPages!, 2),
              checkpoints: this.wal.checkpoints!,
            }
          : undefined,
      redis:
        opts.redis && n > 0
          ? { commandsPerRequest: per(this.redis.commands!, 1), scriptCallsPerRequest: per(this.redis.scriptCalls!, 2) }
          : undefined,
    };
  }
}

/** A loop in one go, until the count or the time is up. */
export async function keyLoad(opts: KeyLoadOptions): Promise<KeyLoad> {
  const run = new KeyLoadRun(opts);
  await run.run(opts.seconds);
  return run.result();
}
