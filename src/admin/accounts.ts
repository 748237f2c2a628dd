// What an admin (at /api/admin or at the command line) may do to an account. Every change is
// made in one transaction with its audit entry; money moves only through creditBalance, with a
// balance_adjustments row saying why.

import { setUserKeysBlocked } from '../accounts/keys.js';
import { randomBase62 } from '../wire.js';
import { hashPassword } from '../accounts/passwords.js';
import { creditBalance } from '../accounts/users.js';
import { nanoToUsd } from '../billing/money.js';
import { conflict, notFound } from '../dashboard/errors.js';
import type { HotStore } from '../store/hot.js';
import type { Sql } from '../store/sql.js';
import { recordAudit, type Actor } from './audit.js';

export interface AccountRow {
  id: string;
  email: string;
  balance_nano: bigint;
  is_admin: boolean;
  disabled_at: Date | null;
  email_verified_at: Date | null;
  created_at: Date;
}

export async function findAccount(sql: Sql, by: { id?: string; email?: string }): Promise<AccountRow | undefined> {
  const [row] = by.id
    ? await sql<
        AccountRow[]
      >`SELECT id, email, balance_nano, is_admin, disabled_at, email_verified_at, created_at FROM users WHERE id = ${by.id}`
    : await sql<
        AccountRow[]
      >`SELECT id, email, balance_nano, is_admin, disabled_at, email_verified_at, created_at FROM users WHERE email = ${(by.email ?? '').trim().toLowerCase()}`;
  return row;
}

/**
 * Credits (amount > 0) or debits (amount < 0) a balance, with a reason. A debit larger than the
 * balance is refused, not clipped: the admin decides what to take instead.
 */
export async function adjustBalance(
  sql: Sql,
  hot: HotStore,
  actor: Actor,
  userId: string,
  amountNano: bigint,
  reason: string,
): Promise<{ adjustmentId: string; balance: bigint; before: bigint }> {
  const done = await creditBalance(sql, hot, async (tx) => {
    const [u] = await tx<
      { balance_nano: bigint; email: string }[]
    >`SELECT balance_nano, email FROM users WHERE id = ${userId} FOR UPDATE`;
    if (!u) throw notFound('No such user.');
    if (u.balance_nano + amountNano < 0n) {
      throw conflict(
        'insufficient_balance',
        `The balance is $${nanoToUsd(u.balance_nano)}; a debit of $${nanoToUsd(-amountNano)} would take it below zero.`,
      );
    }
    const [a] = await tx<{ id: string }[]>`
      INSERT INTO balance_adjustments (user_id, amount_nano, reason, actor)
      VALUES (${userId}, ${amountNano.toString()}, ${reason}, ${actor.label}) RETURNING id`;
    await recordAudit(tx, actor, {
      action: amountNano > 0n ? 'user.credit' : 'user.debit',
      target: u.email,
      reason,
      before: { balance_usd: nanoToUsd(u.balance_nano) },
      after: {
        balance_usd: nanoToUsd(u.balance_nano + amountNano),
        amount_usd: nanoToUsd(amountNano),
        adjustment_id: a.id,
      },
    });
    return { userId, creditNano: amountNano, result: { id: a.id, before: u.balance_nano } };
  });
  return { adjustmentId: done!.result.id, balance: done!.balance, before: done!.result.before };
}

/**
 * Disables or enables an account. Disabling ends its sessions and stops its keys in every
 * gateway process (src/accounts/keys.ts); its balance and records stay as they are.
 */
export async function setDisabled(
  sql: Sql,
  hot: HotStore,
  actor: Actor,
  userId: string,
  disabled: boolean,
  reason: string | null,
): Promise<AccountRow> {
  const row = await sql.begin(async (tx) => {
    const [before] = await tx<
      { email: string; disabled_at: Date | null }[]
    >`SELECT email, disabled_at FROM users WHERE id = ${userId} FOR UPDATE`;
    if (!before) throw notFound('No such user.');
    const [after] = await tx<AccountRow[]>`
      UPDATE users SET disabled_at = CASE WHEN ${disabled} THEN coalesce(disabled_at, now()) ELSE NULL END WHERE id = ${userId}
      RETURNING id, email, balance_nano, is_admin, disabled_at, email_verified_at, created_at`;
    if (disabled) await tx`DELETE FROM sessions WHERE user_id = ${userId}`;
    await recordAudit(tx, actor, {
      action: disabled ? 'user.disable' : 'user.enable',
      target: before.email,
      reason,
      before: { disabled: before.disabled_at !== null },
      after: { disabled },
    });
    return after;
  });
  await setUserKeysBlocked(sql, hot, userId, disabled);
  return row as AccountRow;
}

export async function setAdmin(sql: Sql, actor: Actor, userId: string, isAdmin: boolean): Promise<AccountRow> {
  return (await sql.begin(async (tx) => {
    const [before] = await tx<
      { email: string; is_admin: boolean }[]
    >`SELECT email, is_admin FROM users WHERE id = ${userId} FOR UPDATE`;
    if (!before) throw notFound('No such user.');
    const [after] = await tx<AccountRow[]>`
      UPDATE users SET is_admin = ${isAdmin} WHERE id = ${userId}
      RETURNING id, email, balance_nano, is_admin, disabled_at, email_verified_at, created_at`;
    await recordAudit(tx, actor, {
      action: isAdmin ? 'user.promote' : 'user.demote',
      target: before.email,
      before: { admin: before.is_admin },
      after: { admin: isAdmin },
    });
    return after;
  })) as AccountRow;
}

/**
 * Sets a password (a new random one when none is given, returned to be shown once) and marks
 * the address verified, so that the account can sign in to the dashboard.
 */
export async function setPassword(sql: Sql, actor: Actor, userId: string, password?: string): Promise<string> {
  const chosen = password ?? randomBase62(20);
  const hash = await hashPassword(chosen);
  await sql.begin(async (tx) => {
    const [u] = await tx<{ email: string }[]>`
      UPDATE users SET password_hash = ${hash}, email_verified_at = coalesce(email_verified_at, now()) WHERE id = ${userId} RETURNING email`;
    if (!u) throw notFound('No such user.');
    // Whoever held the old password is signed out.
    await tx`DELETE FROM sessions WHERE user_id = ${userId}`;
    await recordAudit(tx, actor, { action: 'user.password', target: u.email });
  });
  return chosen;
}
