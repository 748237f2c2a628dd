// Small HTTP helpers for tests that need the raw wire rather than an SDK.
import { request, type Dispatcher } from 'undici';

/** Status, headers, text, and the JSON when the body is JSON. */
export async function readResponse(res: Dispatcher.ResponseData) {
  const text = await res.body.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return readResponse(res);
}

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes. */
export async function eventually<T>(fn: () => Promise<T> | T, timeoutMs = 3000, everyMs = 20): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The METRICS_TOKEN test gateways run with, and the header that presents it. */
export const METRICS_TOKEN = 'test-metrics-token-0123456789';
export const OPERATOR = { authorization: `Bearer ${METRICS_TOKEN}` };

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
