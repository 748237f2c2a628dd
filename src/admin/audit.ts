// The admin audit log: one row per admin action, in the transaction that makes the change, so
// an action without its entry (or an entry without its action) cannot happen. The table refuses
// updates and deletes (sql/011_operator.sql).

import type { Sql, Tx } from '../store/sql.js';

/** Who acted: an admin's account, or the operator at the command line (no account). */
export interface Actor {
  id: string | null;
  label: string;
}

/** The command line runs as whoever can reach the data directory or the stores. */
export const cliActor = (): Actor => ({
  id: null,
  label: `cli:${process.env.USER ?? process.env.LOGNAME ?? `uid ${process.getuid?.() ?? '?'}`}`,
});

export interface AuditEntry {
  action: string;
  target?: string | null;
  reason?: string | null;
  before?: unknown;
  after?: unknown;
}

/** bigint is not JSON: money goes in as its decimal string of nano-dollars. */
const plain = (value: unknown): unknown =>
  value === undefined
    ? null
    : JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));

export async function recordAudit(tx: Sql | Tx, actor: Actor, e: AuditEntry): Promise<void> {
  await tx`
    INSERT INTO admin_audit (actor_id, actor, action, target, reason, before, after)
    VALUES (${actor.id}, ${actor.label}, ${e.action}, ${e.target ?? null}, ${e.reason ?? null},
            ${tx.json(plain(e.before) as never)}, ${tx.json(plain(e.after) as never)})`;
}

export interface AuditRow {
  id: bigint;
  actor_id: string | null;
  actor: string;
  action: string;
  target: string | null;
  reason: string | null;
  before: unknown;
  after: unknown;
  created_at: Date;
}

/** Newest first; `beforeId` pages back. */
export function listAudit(sql: Sql, opts: { limit: number; beforeId?: bigint; action?: string }): Promise<AuditRow[]> {
  return sql<AuditRow[]>`
    SELECT id, actor_id, actor, action, target, reason, before, after, created_at FROM admin_audit
    WHERE (${opts.beforeId?.toString() ?? null}::bigint IS NULL OR id < ${opts.beforeId?.toString() ?? null}::bigint)
      AND (${opts.action ?? null}::text IS NULL OR action = ${opts.action ?? null}::text)
    ORDER BY id DESC LIMIT ${opts.limit}`;
}
