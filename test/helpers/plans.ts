// What a backend's plans did, as Postgres counts it: the plan tests run the gateway's own
// statements and read which indexes they used.
import type { Sql } from '../../src/store/sql.js';

/**
 * Index scans on `table` so far, by index (this backend's counts flushed first). For a
 * partitioned table (usage_records, sql/041) each partition's scans count under the parent's
 * index they belong to.
 */
export async function indexScans(sql: Sql, table: string): Promise<Record<string, number>> {
  await sql`SELECT pg_stat_force_next_flush()`;
  const rows = await sql<{ name: string; n: number }[]>`
    WITH parts AS (
      SELECT ${table}::regclass AS rel
      UNION ALL SELECT inhrelid FROM pg_inherits WHERE inhparent = ${table}::regclass)
    SELECT coalesce(p.inhparent::regclass::text, s.indexrelname) AS name, sum(s.idx_scan)::int AS n
    FROM pg_stat_user_indexes s
    JOIN parts ON parts.rel = s.relid
    LEFT JOIN pg_inherits p ON p.inhrelid = s.indexrelid
    GROUP BY 1`;
  return Object.fromEntries(rows.map((r) => [r.name, r.n]));
}
