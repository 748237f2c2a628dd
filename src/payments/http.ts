// Calls to payment providers: JSON both ways, bounded in time and size. Failures become a
// ProviderError whose message names the provider and what went wrong, never a credential.

import { request } from 'undici';

export class ProviderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderError';
  }
}

const TIMEOUT_MS = 15_000;
const MAX_REPLY_BYTES = 1024 * 1024;

export async function callJson(
  provider: string,
  url: string,
  init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; json: unknown }> {
  let status: number;
  let text: string;
  try {
    const res = await request(url, {
      method: init.method,
      headers: {
        accept: 'application/json',
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...init.headers,
      },
      body: init.body,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
      signal: AbortSignal.timeout(TIMEOUT_MS * 2),
    });
    status = res.statusCode;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_REPLY_BYTES) throw new ProviderError(`${provider}: reply larger than ${MAX_REPLY_BYTES} bytes`);
      chunks.push(chunk);
    }
    text = Buffer.concat(chunks).toString('utf8');
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    throw new ProviderError(`${provider}: ${(err as Error)?.message ?? String(err)} (${new URL(url).host})`);
  }
  try {
    return { status, json: JSON.parse(text) };
  } catch {
    throw new ProviderError(`${provider}: HTTP ${status} with a body that is not JSON`);
  }
}

/** JSON text of a body that must be a JSON object, or null. */
export function jsonObject(raw: Buffer | string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
