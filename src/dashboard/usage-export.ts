// The usage log as CSV, with the page's filters (refusals included, at $0): every matching
// record, newest first, up to EXPORT_MAX_ROWS, read in keyset batches and streamed batch by
// batch with the socket's backpressure, so a large export never holds the file.
// Cells a spreadsheet would run as a formula (a key named "=HYPERLINK(…)") are quoted and
// prefixed with an apostrophe.

import { nanoToUsd } from '../billing/money.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import type { Reply } from './http.js';
import { parseQuery, UsageExportQuery } from './schemas.js';
import { requireSession } from './sessions.js';
import { readLog } from './usage.js';

export const EXPORT_MAX_ROWS = 100_000;
// The first batch is small so that the download begins at once (a year's heaviest user's first
// 5,000 rows took 40-120 ms to read and write); the rest go 5,000 at a time.
const FIRST_BATCH = 500;
const BATCH = 5_000;

const COLUMNS = [
  'id',
  'created_at',
  'request_id',
  'model',
  'key_id',
  'key_name',
  'surface',
  'stream',
  'status',
  'prompt_tokens',
  'cached_tokens',
  'completion_tokens',
  'cost_usd',
  'official_cost_usd',
  'latency_ms',
  'ttft_ms',
  // Last, so that readers of the older columns by position are unaffected.
  'error_code',
  'requests',
] as const;

/** RFC 4180 quoting, and no cell that starts like a formula. */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  let s = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n']/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * A log as CSV lines, one batch of rows at a time, read as the client takes them: a year's export
 * holds one batch in memory, not the file. `read` gives the rows after the last one given (none
 * at first); the rows are keyset-ordered, each with its cursor. Stops after `max` rows.
 */
export async function* csvBatches<R extends { cursor_at: string; id: bigint }>(
  columns: readonly string[],
  read: (after: { at: string; id: string } | undefined, limit: number) => Promise<R[]>,
  cells: (row: R) => (string | number | boolean | null)[],
  max: number,
): AsyncGenerator<string> {
  // The header line goes with the first batch: a store that fails on it is still a 503.
  let text = `${columns.join(',')}\r\n`;
  let after: { at: string; id: string } | undefined;
  let count = 0;
  let size = FIRST_BATCH;
  while (count < max) {
    const limit = Math.min(size, max - count);
    const rows = await read(after, limit);
    for (const r of rows) text += cells(r).map(csvCell).join(',') + '\r\n';
    yield text;
    text = '';
    count += rows.length;
    if (rows.length < limit) return;
    size = BATCH;
    const last = rows.at(-1)!;
    after = { at: last.cursor_at, id: last.id.toString() };
  }
}

export function usageExportHandler(gw: Gateway) {
  const sql = gw.sql;
  return async function exportCsv(ex: Exchange): Promise<Reply> {
    const { userId } = await requireSession(gw, ex);
    const q = parseQuery(UsageExportQuery, ex.query);
    const csv = csvBatches(
      COLUMNS,
      (after, limit) => readLog(sql, userId, q, after, limit),
      (r) => [
        r.id.toString(),
        r.created_at.toISOString(),
        r.request_id,
        r.model,
        r.key_id,
        r.key_name,
        r.surface,
        r.stream,
        r.status,
        r.prompt_tokens,
        r.cached_tokens,
        r.completion_tokens,
        nanoToUsd(r.cost_nano),
        nanoToUsd(r.official_cost_nano),
        r.latency_ms,
        r.ttft_ms,
        r.error_code,
        r.requests,
      ],
      EXPORT_MAX_ROWS,
    );
    const day = new Date().toISOString().slice(0, 10);
    return {
      status: 200,
      stream: csv,
      headers: {
        'content-type': 'text/csv; charset=utf-8',
        'content-disposition': `attachment; filename="usage-${day}.csv"`,
      },
    };
  };
}
