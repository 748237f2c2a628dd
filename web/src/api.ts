// The only way the dashboard talks to the gateway: JSON over fetch, the session token from
// localStorage, and every failure turned into an ApiError carrying the API's code, the field
// at fault and the rule's figures (the page words them in its own language).

import type { ErrorBody, ErrorParams, FieldReason } from '../../src/dashboard/error-codes.js';

const TOKEN_KEY = 'airouter.session';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param?: string,
    readonly reason?: FieldReason,
    readonly params?: ErrorParams,
  ) {
    super(message);
  }
}

export const session = {
  get: (): string | null => localStorage.getItem(TOKEN_KEY),
  set: (token: string) => localStorage.setItem(TOKEN_KEY, token),
  drop: () => localStorage.removeItem(TOKEN_KEY),
};

let onSessionLost: () => void = () => {};
/** Called once a request with a session got 401: the session is gone (expired, logged out elsewhere). */
export const whenSessionLost = (fn: () => void) => {
  onSessionLost = fn;
};

/**
 * POST with the session, answered by an event stream: each chunk of text as it arrives. Resolves
 * with the answer's x-request-id once the stream ends; a refusal is an ApiError like any call's.
 */
export async function postStream(
  path: string,
  body: unknown,
  onText: (text: string) => void,
  signal: AbortSignal,
): Promise<string> {
  const token = session.get();
  let res: Response;
  try {
    res = await fetch(`/api/dashboard${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
      signal,
    });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new ApiError(0, 'network', '');
  }
  if (!res.ok || !res.body) {
    const err = (await res.json().catch(() => undefined))?.error as ErrorBody | undefined;
    if (res.status === 401 && token && session.get() === token) {
      session.drop();
      onSessionLost();
    }
    throw new ApiError(
      res.status,
      err?.code ?? 'http_error',
      err?.message ?? `HTTP ${res.status}`,
      err?.param,
      err?.reason,
      err?.params,
    );
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    onText(value);
  }
  return res.headers.get('x-request-id') ?? '';
}

async function call<T>(method: string, url: string, body?: unknown, as: 'json' | 'blob' = 'json'): Promise<T> {
  const token = session.get();
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, 'network', '');
  }
  if (res.status === 204) return undefined as T;
  if (as === 'blob' && res.ok) return (await res.blob()) as T;
  const json = await res.json().catch(() => undefined);
  if (!res.ok) {
    // Several calls can be out on one session (a page's data and the header's balance): only
    // the first 401 ends it, or the next one would send the login page to itself.
    if (res.status === 401 && token && session.get() === token) {
      session.drop();
      onSessionLost();
    }
    const err = json?.error as ErrorBody | undefined;
    throw new ApiError(
      res.status,
      err?.code ?? 'http_error',
      err?.message ?? `HTTP ${res.status}`,
      err?.param,
      err?.reason,
      err?.params,
    );
  }
  return json as T;
}

export const api = {
  get: <T>(path: string) => call<T>('GET', `/api/dashboard${path}`),
  post: <T>(path: string, body?: unknown) => call<T>('POST', `/api/dashboard${path}`, body ?? {}),
  del: <T>(path: string) => call<T>('DELETE', `/api/dashboard${path}`),
  patch: <T>(path: string, body: unknown) => call<T>('PATCH', `/api/dashboard${path}`, body),
  pub: <T>(path: string) => call<T>('GET', `/api/public${path}`),
  /** A file the API makes (CSV), fetched with the session and handed to the browser to save. */
  async download(path: string, filename: string): Promise<void> {
    saveFile(await call<Blob>('GET', `/api/dashboard${path}`, undefined, 'blob'), filename);
  },
};

/** Hands a file made in the page (or fetched with the session) to the browser to save. */
export function saveFile(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  // Some browsers read the URL after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** `?a=1&b=2` from the defined entries. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

// The answers' types come from the schemas that describe them on the server (its OpenAPI
// document is derived from the same ones): src/dashboard/shapes/.
export type * from '../../src/dashboard/shapes/account.js';
export type * from '../../src/dashboard/shapes/keys.js';
export type * from '../../src/dashboard/shapes/money.js';
export type * from '../../src/dashboard/shapes/usage.js';
