// Own-merchant QRIS invoices. A static merchant code carries no order reference, so each open
// invoice gets its own amount: the requested rupiah plus the smallest free suffix of 1..999.
// The choice is made under one advisory lock, and a partial unique index backs it.

import type { Tx } from '../../store/sql.js';
import { DepositError, sweepExpired } from '../deposits.js';
import { toDynamic } from './emv.js';

const AMOUNT_LOCK = 0x7172_6973; // "qris"
export const MAX_SUFFIX = 999n;

export async function uniqueAmount(tx: Tx, requested: bigint): Promise<bigint> {
  await tx`SELECT pg_advisory_xact_lock(${AMOUNT_LOCK})`;
  // Amounts of invoices past their time are free again.
  await sweepExpired(tx);
  const rows = await tx<{ amount: string }[]>`
    SELECT amount::text AS amount FROM deposits
    WHERE provider = 'qris' AND status = 'pending' AND amount > ${requested.toString()}::numeric AND amount <= ${(requested + MAX_SUFFIX).toString()}::numeric`;
  const taken = new Set(rows.map((r) => r.amount));
  for (let k = 1n; k <= MAX_SUFFIX; k++) {
    if (!taken.has((requested + k).toString())) return requested + k;
  }
  throw new DepositError(
    429,
    'no_free_amount',
    'Too many QRIS invoices are open near this amount; try another amount or again in a few minutes.',
    60,
  );
}

export const merchantQr = (staticPayload: string, amountIdr: bigint): string => toDynamic(staticPayload, amountIdr);
