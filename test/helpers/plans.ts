// What a backend's plans did, as Postgres counts it: the plan tests run the gateway's own
// statements and read which indexes they used.
import type { Sql } from '../../src/store/sql.js';

/** Index scans on `table` so far, by index (this backend's counts flushed first). */
export async function indexScans(sql: Sql, table: string): Promise<Record<string, number>> {
  await sql`SELECT pg_stat_force_next_flush()`;
  const rows = await sql<{ name: string; n: number }[]>`
    SELECT indexrelname AS name, idx_scan::int AS n FROM pg_stat_user_indexes WHERE relname = ${table}`;
  return Object.fromEntries(rows.map((r) => [r.name, r.n]));
}
