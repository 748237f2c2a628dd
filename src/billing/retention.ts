// How long request-level rows are kept (USAGE_RETENTION_DAYS): usage records and refusals older
// than that are deleted, a batch at a time; the running totals the dashboard, the admin reports
// and spend caps read (usage_daily, usage_hourly, usage_key_daily, usage_model_daily) stay.
//
// Money stays exact: a record is deleted only once reconcile's checkpoint has passed it (its
// charge is then in the kept sums, sql/031), and in the same transaction its charge is added to
// usage_retired, which `reconcile --full` starts from (sql/032). So an incremental check, a full
// one and every balance say after the deletion what they said before it.

import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock.js';
import type { Sql } from '../store/sql.js';
import { foldCommitted } from './reconcile.js';

/** Rows a transaction deletes: short locks, and the writers never wait long behind one. */
const BATCH = 10_000;
/** One process at a time deletes (any that finds the lock taken skips its turn). */
const RETENTION_LOCK = 0x61725f7274; // "ar_rt"
const EVERY_MS = 60 * 60_000;

export interface Retired {
  records: number;
  refusals: number;
  /** Month partitions of usage_records emptied and dropped (sql/041). */
  months: number;
}

/** Deletes what is older than `days` days; how many rows went. */
export async function retire(sql: Sql, days: number, now = new Date()): Promise<Retired> {
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  const done: Retired = { records: 0, refusals: 0, months: 0 };
  // Records up to the newest committed one are then in the kept sums and may go.
  await foldCommitted(sql);
  for (;;) {
    const n = await sql.begin(async (tx) => {
      const [{ mine }] = await tx<{ mine: boolean }[]>`SELECT pg_try_advisory_xact_lock(${RETENTION_LOCK}) AS mine`;
      if (!mine) return -1;
      const [{ n }] = await tx<{ n: number }[]>`
        WITH gone AS (
          DELETE FROM usage_records WHERE id IN (
            SELECT id FROM usage_records
            WHERE created_at < ${cutoff} AND id <= (SELECT through_id FROM reconcile_checkpoint)
            ORDER BY created_at LIMIT ${BATCH})
          RETURNING user_id, cost_nano),
        kept AS (
          INSERT INTO usage_retired AS r (user_id, charges_nano, records)
          SELECT user_id, sum(cost_nano), count(*) FROM gone GROUP BY user_id
          ON CONFLICT (user_id) DO UPDATE SET charges_nano = r.charges_nano + EXCLUDED.charges_nano, records = r.records + EXCLUDED.records)
        SELECT count(*)::int AS n FROM gone`;
      return n;
    });
    if (n <= 0) break;
    done.records += n;
    if (n < BATCH) break;
  }
  // The months now empty go too. Dropping one locks the table for a moment; behind a long read
  // it gives up (2 s) and the next round tries again.
  try {
    [{ dropped: done.months }] = await sql<
      { dropped: number }[]
    >`SELECT usage_records_drop_before(${cutoff}) AS dropped`;
  } catch {
    // Left for the next round.
  }
  for (;;) {
    const rows = await sql`
      DELETE FROM refused_requests WHERE id IN (
        SELECT id FROM refused_requests WHERE created_at < ${cutoff} ORDER BY created_at LIMIT ${BATCH})
      RETURNING 1`;
    done.refusals += rows.length;
    if (rows.length < BATCH) break;
  }
  return done;
}

/**
 * Runs `retire` every hour while the gateway runs (no-op when `days` is 0: everything is
 * kept). Every process starts it; the lock lets one delete at a time. Returns its stop.
 */
export function startRetention(sql: Sql, days: number, log: Logger, clock: Clock = systemClock): () => void {
  if (days <= 0) return () => {};
  const run = () =>
    retire(sql, days).then(
      (r) => {
        if (r.records + r.refusals + r.months > 0) log.info({ ...r, days }, 'retention: old request rows deleted');
      },
      (err: unknown) => log.warn({ err }, 'retention: could not delete old request rows'),
    );
  return clock.every(EVERY_MS, run);
}
