// The admin pages' API client: /api/admin/* with the dashboard's session, errors as the
// dashboard's ApiError. The answers' types come from the schemas that validate and describe
// them on the server (src/admin/shapes.ts).

import { ApiError, saveFile, session } from '../../api.js';

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const token = session.get();
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, 'network', '');
  }
  const json = await res.json().catch(() => undefined);
  if (!res.ok)
    throw new ApiError(res.status, json?.error?.code ?? 'http_error', json?.error?.message ?? `HTTP ${res.status}`);
  return json as T;
}

export const admin = {
  get: <T>(path: string) => call<T>('GET', `/api/admin${path}`),
  post: <T>(path: string, body: unknown = {}) => call<T>('POST', `/api/admin${path}`, body),
  del: <T>(path: string) => call<T>('DELETE', `/api/admin${path}`),
  /** A file the admin API makes (the request log's CSV), fetched with the session and handed to the browser to save. */
  async download(path: string, filename: string): Promise<void> {
    const token = session.get();
    let res: Response;
    try {
      res = await fetch(`/api/admin${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    } catch {
      throw new ApiError(0, 'network', '');
    }
    if (!res.ok) {
      const json = await res.json().catch(() => undefined);
      throw new ApiError(res.status, json?.error?.code ?? 'http_error', json?.error?.message ?? `HTTP ${res.status}`);
    }
    saveFile(await res.blob(), filename);
  },
  /** The user's side of codes and alerts, in the dashboard API. */
  dashboard: <T>(method: 'GET' | 'POST', path: string, body?: unknown) =>
    call<T>(method, `/api/dashboard${path}`, body),
};

export type * from '../../../../src/admin/shapes.js';
