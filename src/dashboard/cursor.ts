// Keyset pagination cursors: the (created_at, id) of the last row of a page, opaque to clients.
// created_at travels as Postgres' own microsecond text, because a JS Date keeps milliseconds
// only and rows written within the same millisecond would be skipped or repeated. Each list
// tags its cursors, so one list's cursor handed to another is refused, not fed to SQL.

// 'requests': the admin request log (src/admin/requests.ts), over the same two tables as 'usage'.
export type CursorKind = 'usage' | 'deposits' | 'requests';

export interface Cursor {
  /** UTC, microseconds: 2025-01-31T12:00:00.123456Z */
  at: string;
  /** A usage record's bigint id (digits) or a deposit's uuid. */
  id: string;
}

const TAG: Record<CursorKind, string> = { usage: 'u1', deposits: 'd1', requests: 'r1' };
const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const ID: Record<CursorKind, RegExp> = {
  usage: /^[1-9]\d{0,18}$/,
  requests: /^[1-9]\d{0,18}$/,
  deposits: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
};

/** SQL expression rendering created_at as Cursor.at. */
export const CURSOR_AT_SQL = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export function encodeCursor(kind: CursorKind, c: Cursor): string {
  return Buffer.from(`${TAG[kind]}|${c.at}|${c.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(kind: CursorKind, text: string): Cursor | null {
  if (!/^[A-Za-z0-9_-]{1,256}$/.test(text)) return null;
  const [tag, at, id, ...rest] = Buffer.from(text, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || tag !== TAG[kind] || !at || !id || !AT.test(at) || !ID[kind].test(id)) return null;
  // Rejects impossible dates (Feb 30) that Date.parse would roll over and Postgres would refuse.
  const t = Date.parse(at);
  if (Number.isNaN(t) || at < '1970' || new Date(t).toISOString().slice(0, 19) !== at.slice(0, 19)) return null;
  if (kind !== 'deposits' && BigInt(id) > 9223372036854775807n) return null;
  return { at, id };
}
