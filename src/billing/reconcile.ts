// The ledger invariant, as a check an operator (or a test) can run at any time:
// for every user, balance = credited deposits − charged usage, to the nano-dollar.

import type { Sql } from '../store/sql.js';

export interface ReconcileRow {
  user_id: string;
  email: string;
  balance_nano: bigint;
  credits_nano: bigint;
  charges_nano: bigint;
}

export interface ReconcileReport {
  users: number;
  mismatches: ReconcileRow[];
  ok: boolean;
}

export async function reconcile(sql: Sql): Promise<ReconcileReport> {
  const rows = await sql<(ReconcileRow & { ok: boolean })[]>`
    SELECT u.id AS user_id, u.email, u.balance_nano,
           coalesce(d.credits, 0)::bigint AS credits_nano,
           coalesce(c.charges, 0)::bigint AS charges_nano,
           u.balance_nano = coalesce(d.credits, 0) - coalesce(c.charges, 0) AS ok
    FROM users u
    LEFT JOIN (SELECT user_id, sum(credit_nano) AS credits FROM deposits WHERE status = 'paid' GROUP BY user_id) d ON d.user_id = u.id
    LEFT JOIN (SELECT user_id, sum(cost_nano) AS charges FROM usage_records GROUP BY user_id) c ON c.user_id = u.id`;
  const mismatches = rows.filter((r) => !r.ok).map(({ ok: _ok, ...r }) => r);
  return { users: rows.length, mismatches, ok: mismatches.length === 0 };
}
