// Small HTTP helpers for the harness itself (not for load): control requests, readiness polls,
// free ports, Prometheus scrapes.

import net from 'node:net';
import { request } from 'undici';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ port: 0, host: '127.0.0.1' }, () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** A one-off request on its own connection (so that SO_REUSEPORT may pick any worker). */
export async function fetchText(url: string, opts: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {}): Promise<{ status: number; text: string }> {
  const res = await request(url, {
    method: opts.method ?? 'GET',
    headers: { connection: 'close', ...opts.headers },
    body: opts.body,
    reset: true,
    headersTimeout: opts.timeoutMs ?? 10_000,
    bodyTimeout: opts.timeoutMs ?? 10_000,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

export async function getJson<T>(url: string): Promise<T> {
  const { status, text } = await fetchText(url);
  if (status !== 200) throw new Error(`GET ${url}: status ${status}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

/** Polls until `url` answers at all (any status), or fails when `dead()` or on time-out. */
export async function waitForHttp(url: string, timeoutMs: number, dead: () => boolean, why: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (dead()) throw new Error(`process behind ${url} exited\n${why()}`);
    try {
      await fetchText(url, { timeoutMs: 2000 });
      return;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms (${last})\n${why()}`);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Prometheus text → sample name (with labels) → value. */
export function parseProm(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const sp = line.lastIndexOf(' ');
    if (sp <= 0) continue;
    const v = Number(line.slice(sp + 1));
    if (Number.isFinite(v)) out.set(line.slice(0, sp), v);
  }
  return out;
}

/**
 * Scrapes GET /metrics `attempts` times on fresh connections and keeps, per sample, the
 * largest value seen. Each worker keeps its own registry and the kernel spreads connections
 * across workers, so with enough attempts every worker answers at least once; nothing in the
 * default metrics tells workers apart, so gauges and counters are per-worker maxima.
 */
export async function scrapeMax(base: string, attempts: number, headers: Record<string, string> = {}): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let i = 0; i < attempts; i++) {
    try {
      const { status, text } = await fetchText(`${base}/metrics`, { timeoutMs: 5000, headers });
      if (status !== 200) continue;
      for (const [k, v] of parseProm(text)) if (!(out.get(k)! >= v)) out.set(k, v);
    } catch {
      // a worker restarting; try again
    }
  }
  return out;
}
