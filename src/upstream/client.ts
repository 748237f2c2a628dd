// One keep-alive connection pool per upstream origin (undici Agent), shared by every request.

import { Agent, errors as undiciErrors } from 'undici';
import type { Readable } from 'node:stream';

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable & { text(): Promise<string>; json(): Promise<unknown> };
}

export interface UpstreamTimeouts {
  connectMs: number;
  firstByteMs: number;
  idleMs: number;
  connections: number;
}

export class UpstreamClient {
  private readonly agent: Agent;

  constructor(t: UpstreamTimeouts) {
    this.agent = new Agent({
      connections: t.connections,
      connect: { timeout: t.connectMs },
      headersTimeout: t.firstByteMs,
      bodyTimeout: t.idleMs,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
    });
  }

  async post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<UpstreamResponse> {
    const { origin } = new URL(url);
    const res = await this.agent.request({
      origin,
      path: url.slice(origin.length),
      method: 'POST',
      headers,
      body,
      signal,
    });
    return { status: res.statusCode, headers: res.headers, body: res.body as UpstreamResponse['body'] };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** Classifies a thrown request error: a time-out, or any other failure to get an answer. */
export function isTimeout(err: unknown): boolean {
  return (
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError ||
    (err as { code?: string })?.code === 'UND_ERR_CONNECT_TIMEOUT'
  );
}

/** A request undici refused to send (invalid header, method or body): nothing reached the upstream. */
export function isInvalidRequest(err: unknown): boolean {
  return err instanceof undiciErrors.InvalidArgumentError || (err as { code?: string })?.code === 'UND_ERR_INVALID_ARG';
}
