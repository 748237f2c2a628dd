// The deposit state machine, shared by every provider:
//
//   pending ─► paid      (the credit, in the same transaction)
//           ─► expired   (the sweeper, or the provider said so)
//           ─► failed    (the provider refused or ended it)
//   expired ─► paid      (money that arrives late still arrives: it is credited, and logged)
//
// Each move is one conditional UPDATE on the row's current status, under the row lock, so
// a notification repeated or raced any number of times credits once. Nothing leaves 'paid'.

import { creditBalance } from '../accounts/users.js';
import type { HotStore } from '../store/hot.js';
import type { Sql, Tx } from '../store/sql.js';

export type DepositStatus = 'pending' | 'paid' | 'expired' | 'failed';
/** Who confirms a deposit, a registered provider's id (src/payments/configs.ts); also the {provider} of its notification URL. */
export type Provider = string;

export interface DepositRow {
  id: string;
  user_id: string;
  method: string;
  provider: Provider | null;
  status: DepositStatus;
  /** numeric as text, exactly as stored */
  amount: string;
  currency: string;
  credit_nano: bigint;
  external_id: string | null;
  details: Record<string, unknown>;
  created_at: Date;
  paid_at: Date | null;
  expires_at: Date | null;
}

const COLUMNS =
  'id, user_id, method, provider, status, amount::text AS amount, currency, credit_nano, external_id, details, created_at, paid_at, expires_at';

/** Refusals a client can act on (the dashboard maps them to its envelope). */
export class DepositError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterS?: number,
    /** The field at fault and its rule's figures, for a client to word the refusal itself. */
    readonly detail?: {
      param: string;
      reason?: 'too_small' | 'too_large' | 'not_allowed';
      params?: Record<string, string | string[]>;
    },
  ) {
    super(message);
    this.name = 'DepositError';
  }
}

export async function findDeposit(sql: Sql | Tx, id: string): Promise<DepositRow | undefined> {
  const [row] = await sql<DepositRow[]>`SELECT ${sql.unsafe(COLUMNS)} FROM deposits WHERE id = ${id}`;
  return row;
}

export interface Terms {
  amount: string;
  currency: string;
  creditNano: bigint;
  details: Record<string, unknown>;
}

/**
 * A new pending deposit. The user's row is locked while their open deposits are counted, so
 * concurrent requests cannot overshoot `maxOpen`; `terms` runs inside the same transaction
 * (own-merchant QRIS picks its unique amount there).
 */
export async function openDeposit(
  sql: Sql,
  o: {
    userId: string;
    method: string;
    provider: Provider;
    maxOpen: number;
    expiresInS: number;
    terms: (tx: Tx) => Promise<Terms>;
  },
): Promise<DepositRow> {
  return (await sql.begin(async (tx) => {
    await tx`SELECT 1 FROM users WHERE id = ${o.userId} FOR UPDATE`;
    await sweepExpired(tx, o.userId);
    const [open] = await tx<{ n: number; next_s: number | null }[]>`
      SELECT count(*)::int AS n, ceil(extract(epoch FROM min(expires_at) - now()))::int AS next_s
      FROM deposits WHERE user_id = ${o.userId} AND status = 'pending'`;
    if (open.n >= o.maxOpen) {
      throw new DepositError(
        429,
        'too_many_open_deposits',
        `You have ${open.n} unpaid deposits open (at most ${o.maxOpen}); pay one or wait until one expires.`,
        Math.max(1, open.next_s ?? 1),
      );
    }
    const t = await o.terms(tx);
    const [row] = await tx<DepositRow[]>`
      INSERT INTO deposits (user_id, method, provider, status, amount, currency, credit_nano, details, expires_at)
      VALUES (${o.userId}, ${o.method}, ${o.provider}, 'pending', ${t.amount}, ${t.currency}, ${t.creditNano.toString()},
              ${tx.json(t.details as never)}, now() + make_interval(secs => ${o.expiresInS}))
      RETURNING ${tx.unsafe(COLUMNS)}`;
    return row;
  })) as DepositRow;
}

/** Records what the provider answered to a pending deposit's creation (its reference, payment details). */
export async function attachProviderOrder(
  sql: Sql,
  id: string,
  reference: string | null,
  details: Record<string, unknown>,
  expiresAt?: Date,
): Promise<DepositRow | undefined> {
  const [row] = await sql<DepositRow[]>`
    UPDATE deposits SET external_id = coalesce(external_id, ${reference}), details = details || ${sql.json(details as never)},
                        expires_at = least(expires_at, ${expiresAt ?? null}::timestamptz)
    WHERE id = ${id}
    RETURNING ${sql.unsafe(COLUMNS)}`;
  return row;
}

export type PaidOutcome =
  | { kind: 'credited'; deposit: DepositRow; previous: DepositStatus; balance: bigint }
  | { kind: 'unchanged'; deposit: DepositRow; reason: string }
  | { kind: 'refused'; deposit?: DepositRow; reason: string }
  | { kind: 'missing' };

/**
 * pending|expired → paid, crediting the stored credit_nano. `reference` is the provider's
 * payment reference: it must match one already recorded, and no other deposit may hold it.
 */
export async function markPaid(
  sql: Sql,
  hot: HotStore,
  id: string,
  o: {
    provider: Provider | null;
    reference: string | null;
    by: string;
    details?: Record<string, unknown>;
    /** Run in the crediting transaction (an admin's audit entry), so both commit or neither. */
    within?: (tx: Tx, paid: DepositRow, previous: DepositStatus) => Promise<void>;
  },
): Promise<PaidOutcome> {
  let outcome: PaidOutcome | undefined;
  let previous: DepositStatus = 'pending';
  try {
    const done = await creditBalance(sql, hot, async (tx) => {
      const [d] = await tx<DepositRow[]>`SELECT ${tx.unsafe(COLUMNS)} FROM deposits WHERE id = ${id} FOR UPDATE`;
      if (!d || (o.provider && d.provider !== o.provider)) {
        outcome = { kind: 'missing' };
        return null;
      }
      const otherReference = o.reference !== null && d.external_id !== null && d.external_id !== o.reference;
      if (d.status === 'paid') {
        outcome = otherReference
          ? {
              kind: 'refused',
              deposit: d,
              reason: `already paid under reference ${d.external_id}, now reference ${o.reference}: a second payment?`,
            }
          : { kind: 'unchanged', deposit: d, reason: 'already paid' };
        return null;
      }
      if (d.status === 'failed') {
        outcome = {
          kind: 'refused',
          deposit: d,
          reason: 'the deposit had failed; an operator must look at this payment',
        };
        return null;
      }
      if (otherReference) {
        outcome = {
          kind: 'refused',
          deposit: d,
          reason: `reference ${o.reference} is not the deposit's ${d.external_id}`,
        };
        return null;
      }
      previous = d.status;
      const [row] = await tx<DepositRow[]>`
        UPDATE deposits
        SET status = 'paid', paid_at = now(), external_id = coalesce(external_id, ${o.reference}),
            details = details || ${tx.json({ ...o.details, paid_by: o.by, ...(previous !== 'pending' ? { paid_after: previous } : {}) } as never)}
        WHERE id = ${id} AND status IN ('pending', 'expired')
        RETURNING ${tx.unsafe(COLUMNS)}`;
      await o.within?.(tx, row, previous);
      return { userId: row.user_id, creditNano: row.credit_nano, result: row };
    });
    if (done) return { kind: 'credited', deposit: done.result, previous, balance: done.balance };
  } catch (err) {
    if ((err as { code?: string }).code === '23505')
      return { kind: 'refused', reason: `reference ${o.reference} already paid another deposit` };
    throw err;
  }
  return outcome!;
}

/** pending → expired | failed; any other status stays as it is (returns undefined). */
export async function markEnded(
  sql: Sql,
  id: string,
  to: 'expired' | 'failed',
  reason: string,
): Promise<DepositRow | undefined> {
  const [row] = await sql<DepositRow[]>`
    UPDATE deposits SET status = ${to}, details = details || ${sql.json({ ended_by: reason } as never)}
    WHERE id = ${id} AND status = 'pending'
    RETURNING ${sql.unsafe(COLUMNS)}`;
  return row;
}

/** Expires pending deposits past their time (one user's, or all); returns how many. */
export async function sweepExpired(sql: Sql | Tx, userId?: string): Promise<number> {
  const rows = await sql`
    UPDATE deposits SET status = 'expired', details = details || '{"ended_by":"expiry"}'::jsonb
    WHERE status = 'pending' AND expires_at <= now() ${userId ? sql`AND user_id = ${userId}` : sql``}
    RETURNING id`;
  return rows.length;
}
