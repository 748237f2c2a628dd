import type { Sql, Tx } from '../store/sql.js';
import { MAX_BALANCE_NANO, nanoToUsd } from '../billing/money.js';
import { GatewayError } from '../errors.js';
import type { HotStore } from '../store/hot.js';
import { hashPassword } from './passwords.js';

export interface UserRow {
  id: string;
  email: string;
  balance_nano: bigint;
  email_verified_at: Date | null;
}

export const CREDIT_CHANNEL = 'airouter_credit';

/**
 * A gateway whose hot store lives in its own memory cannot be reached by `airouter user
 * credit` in another process; Postgres tells it instead. (With Redis the crediting process
 * updates the shared hot store itself.)
 */
export async function watchCredits(sql: Sql, hot: HotStore): Promise<void> {
  if (hot.kind !== 'memory') return;
  await sql.listen(CREDIT_CHANNEL, (payload) => {
    const [pid, userId, amount, seq] = payload.split(':');
    if (Number(pid) !== process.pid && userId && /^-?\d+$/.test(amount ?? '') && /^\d+$/.test(seq ?? ''))
      void hot.credit(userId, BigInt(amount), BigInt(seq));
  });
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export async function findUserByEmail(
  sql: Sql,
  email: string,
): Promise<(UserRow & { password_hash: string | null; disabled_at: Date | null }) | undefined> {
  const [row] = await sql<(UserRow & { password_hash: string | null; disabled_at: Date | null })[]>`
    SELECT id, email, balance_nano, email_verified_at, password_hash, disabled_at FROM users WHERE email = ${normalizeEmail(email)}`;
  return row;
}

/** A verified user, as the operator CLI creates them. Fails if the email exists. */
export async function createVerifiedUser(sql: Sql, email: string, password?: string): Promise<UserRow> {
  const hash = password ? await hashPassword(password) : null;
  const [row] = await sql<UserRow[]>`
    INSERT INTO users (email, password_hash, email_verified_at) VALUES (${normalizeEmail(email)}, ${hash}, now())
    RETURNING id, email, balance_nano, email_verified_at`;
  return row;
}

/**
 * The one way money enters (or, for an admin's debit, a negative credit, leaves) a balance. `record` writes why (a paid deposit row) inside the
 * transaction that raises users.balance_nano, and says whom to credit and how much; returning
 * null credits nothing. After the commit, the hot balance. Postgres first, so a crash in
 * between leaves the hot copy low, never high.
 */
export async function creditBalance<T>(
  sql: Sql,
  hot: HotStore,
  record: (tx: Tx) => Promise<{ userId: string; creditNano: bigint; result: T } | null>,
): Promise<{ result: T; userId: string; creditNano: bigint; balance: bigint; seq: bigint } | null> {
  const done = (await sql.begin(async (tx) => {
    const r = await record(tx);
    if (!r) return null;
    // Past the most a balance may hold, nothing moves: a refusal, never an overflow.
    // Numbered, so that an account's load racing this credit takes it exactly once (credit.lua).
    const [u] = await tx<{ balance_nano: bigint; credit_seq: bigint }[]>`
      UPDATE users SET balance_nano = balance_nano + ${r.creditNano.toString()}::bigint, credit_seq = credit_seq + 1
      WHERE id = ${r.userId} AND balance_nano <= ${(MAX_BALANCE_NANO - r.creditNano).toString()}::numeric
      RETURNING balance_nano, credit_seq`;
    if (!u) {
      const [exists] = await tx`SELECT 1 FROM users WHERE id = ${r.userId}`;
      if (!exists) throw new Error(`no user ${r.userId} to credit`);
      throw new GatewayError(
        'invalid_request',
        `A balance may hold at most $${nanoToUsd(MAX_BALANCE_NANO)}; this credit of $${nanoToUsd(r.creditNano)} would pass it.`,
        { code: 'amount_out_of_range' },
      );
    }
    // Delivered on commit to gateways whose hot store is in-process (see watchCredits).
    await tx`SELECT pg_notify(${CREDIT_CHANNEL}, ${`${process.pid}:${r.userId}:${r.creditNano}:${u.credit_seq}`})`;
    return { ...r, balance: u.balance_nano, seq: u.credit_seq };
  })) as { result: T; userId: string; creditNano: bigint; balance: bigint; seq: bigint } | null;
  if (done) await hot.credit(done.userId, done.creditNano, done.seq);
  return done;
}

/** An operator credit: a deposit row recorded as paid at once, and the balance. */
export async function creditUser(
  sql: Sql,
  hot: HotStore,
  userId: string,
  creditNano: bigint,
  deposit: { method: string; amount: string; currency: string; externalId?: string; details?: Record<string, unknown> },
): Promise<{ depositId: string; balance: bigint }> {
  const done = await creditBalance(sql, hot, async (tx) => {
    const [d] = await tx<{ id: string }[]>`
      INSERT INTO deposits (user_id, method, status, amount, currency, credit_nano, external_id, details, paid_at)
      VALUES (${userId}, ${deposit.method}, 'paid', ${deposit.amount}, ${deposit.currency}, ${creditNano.toString()},
              ${deposit.externalId ?? null}, ${tx.json((deposit.details ?? {}) as never)}, now())
      RETURNING id`;
    return { userId, creditNano, result: d.id };
  });
  return { depositId: done!.result, balance: done!.balance };
}
