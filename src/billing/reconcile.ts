// The ledger invariants, as a check an operator (or a test) can run at any time:
// - in Postgres, for every user: balance = credited deposits + adjustments by admins (signed)
//   − charged usage, and the running
//   total of charges equals the sum of the usage records, to the nano-dollar;
// - in the hot store, for every loaded account: its balance = the Postgres balance − the charges
//   it already carries that still wait in the outbox, and its reserved total = its live holds.
//
// The sum of the records is kept per user up to a checkpoint (sql/031): a run sums only the
// records since, and `full` sums them all again (with what retention deleted, sql/032). The
// checkpoint is the highest record id read while holding the writers' lock exclusively
// (RECORDS_LOCK): every batch holds it shared until it commits, so no record below that id can
// still appear, and none is ever counted twice or missed however the writers' commits interleave.

import type { OutboxStore } from '../store/hot.js';
import type { Sql, Tx } from '../store/sql.js';
import { RECORDS_LOCK } from './outbox-writer.js';

export interface ReconcileRow {
  user_id: string;
  email: string;
  balance_nano: bigint;
  credits_nano: bigint;
  charges_nano: bigint;
  charged_nano: bigint;
}

export interface HotMismatch {
  userId: string;
  email: string;
  /** What the hot balance should be: Postgres balance − accounted charges in the outbox. */
  expected: bigint;
  hot: bigint;
  reserved: bigint;
  holds: bigint;
}

export interface ReconcileReport {
  users: number;
  mismatches: ReconcileRow[];
  /** Accounts compared with the hot store (0 when none was given). */
  hotAccounts: number;
  hotMismatches: HotMismatch[];
  /** Records waiting in the outbox. */
  outbox: number;
  ok: boolean;
}

export async function reconcile(sql: Sql, hot?: OutboxStore, { full = false } = {}): Promise<ReconcileReport> {
  const rows = await checkPostgres(sql, full);
  const mismatches = rows.filter((r) => !r.ok).map(({ ok: _ok, ...r }) => r);
  const report: ReconcileReport = {
    users: rows.length,
    mismatches,
    hotAccounts: 0,
    hotMismatches: [],
    outbox: 0,
    ok: mismatches.length === 0,
  };
  if (!hot) return report;

  const emails = new Map(rows.map((r) => [r.user_id, r.email]));
  // Writers may commit between the Postgres reads and the hot snapshot: an account whose
  // charged total moved across the snapshot is compared again.
  let pending: Set<string> | undefined;
  for (let attempt = 0; attempt < 10; attempt++) {
    const before = await pgBalances(sql);
    const accounts = (await hot.snapshotAccounts()).filter((a) => !pending || pending.has(a.userId));
    const after = await pgBalances(sql);
    const unsettled = new Set<string>();
    for (const a of accounts) {
      const b = before.get(a.userId);
      const c = after.get(a.userId);
      if (!b || !c) continue; // the user was deleted
      if (b.charged !== c.charged || b.balance !== c.balance) {
        unsettled.add(a.userId);
        continue;
      }
      if (!pending) report.hotAccounts++;
      let expected = b.balance - a.pendingAccounted;
      // An entry committed before the Postgres read whose acknowledgement has not run yet (the
      // writer's next step, or a writer that died between the two) is in both figures.
      if (expected !== a.balance) expected += await committedBefore(sql, a.pendingAccountedIds, b.charged);
      if (expected !== a.balance || a.reserved !== a.holds) {
        report.hotMismatches.push({
          userId: a.userId,
          email: emails.get(a.userId) ?? '',
          expected,
          hot: a.balance,
          reserved: a.reserved,
          holds: a.holds,
        });
      }
    }
    if (!pending) report.hotAccounts += unsettled.size;
    pending = unsettled;
    if (pending.size === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  for (const userId of pending ?? []) {
    report.hotMismatches.push({
      userId,
      email: emails.get(userId) ?? '',
      expected: -1n,
      hot: -1n,
      reserved: 0n,
      holds: 0n,
    });
  }
  report.outbox = await hot.outboxLength();
  report.ok = report.ok && report.hotMismatches.length === 0;
  return report;
}

type Checked = ReconcileRow & { ok: boolean };

/** Two runs at once: the second to commit fails on the checkpoint's row and runs again. */
const SERIALIZATION_FAILURE = '40001';

async function retried<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if ((err as { code?: string }).code !== SERIALIZATION_FAILURE || attempt >= 5) throw err;
    }
  }
}

const checkPostgres = (sql: Sql, full: boolean): Promise<Checked[]> => retried(() => checkOnce(sql, full));

/** The highest record id below which no record can still appear (see the file's head). */
async function committedThrough(sql: Sql): Promise<bigint> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${RECORDS_LOCK})`;
    // Never below the checkpoint: retention may have deleted the newest records.
    const [{ id }] = await tx<{ id: bigint }[]>`
      SELECT greatest((SELECT coalesce(max(id), 0) FROM usage_records), (SELECT through_id FROM reconcile_checkpoint))::bigint AS id`;
    return id;
  });
}

/**
 * Adds the records since the checkpoint, up to `upTo`, to the kept sums and moves the
 * checkpoint there; `full` starts the sums again from the charges retention took out of the
 * records (sql/032) and adds every record.
 */
async function fold(tx: Tx, upTo: bigint, full: boolean): Promise<void> {
  const [{ through_id: kept }] = await tx<{ through_id: bigint }[]>`SELECT through_id FROM reconcile_checkpoint`;
  const through = full ? 0n : kept;
  // First, so that a run that committed since this snapshot makes this one fail (and retry)
  // before it adds the same records again.
  await tx`UPDATE reconcile_checkpoint SET through_id = ${upTo.toString()}::bigint, checked_at = now()`;
  if (full) {
    await tx`DELETE FROM reconcile_charges`;
    await tx`INSERT INTO reconcile_charges (user_id, charges_nano) SELECT user_id, charges_nano FROM usage_retired`;
  }
  await tx`
    INSERT INTO reconcile_charges AS r (user_id, charges_nano)
    SELECT user_id, sum(cost_nano) FROM usage_records WHERE id > ${through.toString()}::bigint AND id <= ${upTo.toString()}::bigint GROUP BY user_id
    ON CONFLICT (user_id) DO UPDATE SET charges_nano = r.charges_nano + EXCLUDED.charges_nano`;
}

/** Moves the checkpoint to the newest committed record (what retention may then delete). */
export function foldCommitted(sql: Sql): Promise<bigint> {
  return retried(async () => {
    const upTo = await committedThrough(sql);
    await sql.begin('isolation level repeatable read', (tx) => fold(tx, upTo, false));
    return upTo;
  });
}

async function checkOnce(sql: Sql, full: boolean): Promise<Checked[]> {
  const upTo = await committedThrough(sql);
  // One snapshot for the balances, the kept sums and the records after the checkpoint.
  return sql.begin('isolation level repeatable read', async (tx) => {
    await fold(tx, upTo, full);
    // The kept sums, and the records past the checkpoint (committed since its id was read).
    return tx<Checked[]>`
      SELECT u.id AS user_id, u.email, u.balance_nano, u.charged_nano,
             coalesce(d.credits, 0)::bigint AS credits_nano,
             (coalesce(k.charges_nano, 0) + coalesce(t.charges, 0))::bigint AS charges_nano,
             u.balance_nano = coalesce(d.credits, 0) - coalesce(k.charges_nano, 0) - coalesce(t.charges, 0)
               AND u.charged_nano = coalesce(k.charges_nano, 0) + coalesce(t.charges, 0) AS ok
      FROM users u
      LEFT JOIN (SELECT user_id, sum(credits) AS credits FROM (
                   SELECT user_id, credit_nano AS credits FROM deposits WHERE status = 'paid'
                   UNION ALL SELECT user_id, amount_nano FROM balance_adjustments) x GROUP BY user_id) d ON d.user_id = u.id
      LEFT JOIN reconcile_charges k ON k.user_id = u.id
      LEFT JOIN (SELECT user_id, sum(cost_nano) AS charges FROM usage_records WHERE id > ${upTo.toString()}::bigint GROUP BY user_id) t ON t.user_id = u.id`;
  });
}

async function pgBalances(sql: Sql): Promise<Map<string, { balance: bigint; charged: bigint }>> {
  const rows = await sql<
    { id: string; balance_nano: bigint; charged_nano: bigint }[]
  >`SELECT id, balance_nano, charged_nano FROM users`;
  return new Map(rows.map((r) => [r.id, { balance: r.balance_nano, charged: r.charged_nano }]));
}

/**
 * What the outbox entries `settleIds` cost that was committed by the time the user's charged
 * total was `charged` (a user's commits raise it in turn, so those are the ones at or below it).
 */
async function committedBefore(sql: Sql, settleIds: string[], charged: bigint): Promise<bigint> {
  if (settleIds.length === 0) return 0n;
  const [row] = await sql<{ cost: bigint }[]>`
    SELECT coalesce(sum(cost_nano), 0)::bigint AS cost FROM usage_records
    WHERE settle_id = ANY(${settleIds}::uuid[]) AND charged_after_nano <= ${charged.toString()}::bigint`;
  return row.cost;
}
