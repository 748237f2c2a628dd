// Small HTTP helpers for the harness itself (not for load): control requests, readiness polls,
// free ports, Prometheus scrapes.

import { readFileSync } from 'node:fs';
import net from 'node:net';
import { request } from 'undici';

/**
 * A port nobody listens on right now, below the kernel's range of ephemeral ports. A port from
 * that range (what binding port 0 gives), once closed, can become the local end of any outgoing
 * connection before the server it was meant for binds it: CI once saw `serve` refused its port
 * that way.
 */
export async function freePort(): Promise<number> {
  let low = 32768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // not Linux: Linux's default
  }
  const from = Math.max(1024, low - 12_000);
  for (let i = 0; i < 100; i++) {
    const port = from + Math.floor(Math.random() * (low - from));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port found between ${from} and ${low}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A one-off request on its own connection (so that SO_REUSEPORT may pick any worker). */
export async function fetchText(
  url: string,
  opts: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<{ status: number; text: string }> {
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
export async function waitForHttp(
  url: string,
  timeoutMs: number,
  dead: () => boolean,
  why: () => string,
): Promise<void> {
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
export async function scrapeMax(
  base: string,
  attempts: number,
  headers: Record<string, string> = {},
): Promise<Map<string, number>> {
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
