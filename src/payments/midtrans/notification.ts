// Midtrans payment notifications. The signature_key covers order_id, status_code and
// gross_amount only, not the transaction status, and notifications repeat and arrive out of
// order. So a notification that verifies is only a prompt: the status acted upon is the one
// Midtrans' status API gives for the order at that moment.

import * as v from 'valibot';
import { sameAmount } from '../amounts.js';
import {
  applyEnded,
  applyPaid,
  depositOf,
  parseNotification,
  refuse,
  type NotifyContext,
  type NotifyResult,
} from '../notify.js';
import type { MidtransClient, MidtransStatus } from './client.js';
import { midtransSignatureValid } from './signature.js';

// A plain (not strict) object: Midtrans adds fields as it pleases, and none of them is trusted.
const Notification = v.object({
  order_id: v.pipe(v.string(), v.maxLength(50)),
  status_code: v.pipe(v.string(), v.regex(/^\d{3}$/)),
  gross_amount: v.pipe(v.string(), v.maxLength(32)),
  signature_key: v.pipe(v.string(), v.maxLength(256)),
  transaction_status: v.pipe(v.string(), v.maxLength(64)),
  transaction_id: v.optional(v.pipe(v.string(), v.maxLength(128))),
  currency: v.optional(v.string()),
});

export type MidtransOutcome = 'paid' | 'pending' | 'expired' | 'failed' | 'reversed';

/** What a Midtrans transaction status means for a deposit. */
export function midtransOutcome(s: Pick<MidtransStatus, 'transaction_status' | 'fraud_status'>): MidtransOutcome {
  switch (s.transaction_status) {
    case 'settlement':
      return 'paid';
    case 'capture':
      return s.fraud_status === 'accept' ? 'paid' : s.fraud_status === 'deny' ? 'failed' : 'pending';
    case 'expire':
      return 'expired';
    case 'cancel':
    case 'deny':
    case 'failure':
      return 'failed';
    case 'refund':
    case 'partial_refund':
    case 'chargeback':
    case 'partial_chargeback':
      return 'reversed';
    default:
      return 'pending';
  }
}

export async function midtransNotification(
  ctx: NotifyContext,
  client: MidtransClient,
  serverKey: string,
  raw: Buffer,
): Promise<NotifyResult> {
  const parsed = parseNotification(Notification, raw);
  if (!parsed.ok) return parsed.refusal;
  const n = parsed.n;
  if (!midtransSignatureValid(n, serverKey)) return refuse(401, 'signature_key does not verify');

  const d = await depositOf(ctx, 'midtrans', n.order_id);
  if (!d) return refuse(404, `unknown order ${n.order_id}`);
  if (!sameAmount(n.gross_amount, d.amount))
    return refuse(409, `gross_amount ${n.gross_amount} is not the order's ${d.amount}`, d.id);
  if (n.currency !== undefined && n.currency !== d.currency)
    return refuse(409, `currency ${n.currency} is not the order's ${d.currency}`, d.id);
  if (n.transaction_id !== undefined && d.external_id !== null && n.transaction_id !== d.external_id) {
    return refuse(409, `transaction_id ${n.transaction_id} is not the order's ${d.external_id}`, d.id);
  }

  let s: MidtransStatus;
  try {
    s = await client.status(d.id);
  } catch (err) {
    // Not acknowledged: Midtrans sends the notification again later.
    return refuse(503, `cannot read the status back from Midtrans: ${(err as Error).message}`, d.id);
  }
  if (!sameAmount(s.gross_amount, d.amount))
    return refuse(409, `Midtrans status gives gross_amount ${s.gross_amount}, the order is ${d.amount}`, d.id);
  if (s.transaction_id !== undefined && d.external_id !== null && s.transaction_id !== d.external_id) {
    return refuse(
      409,
      `Midtrans status gives transaction_id ${s.transaction_id}, the order has ${d.external_id}`,
      d.id,
    );
  }
  const note = s.transaction_status === n.transaction_status ? '' : ` (the notification said ${n.transaction_status})`;
  const outcome = midtransOutcome(s);
  switch (outcome) {
    case 'paid':
      return applyPaid(
        ctx,
        d,
        'midtrans',
        s.transaction_id ?? d.external_id,
        `midtrans ${s.transaction_status}${note}`,
        { midtrans_status: s.transaction_status },
      );
    case 'expired':
    case 'failed':
      return applyEnded(ctx, d, outcome, `midtrans ${s.transaction_status}${note}`);
    case 'reversed':
      if (d.status === 'paid') {
        ctx.log.error(
          { deposit_id: d.id, user_id: d.user_id, midtrans_status: s.transaction_status },
          'deposit: Midtrans reports the money of a credited deposit taken back; the balance was not changed, an operator must decide',
        );
      }
      return { ok: true, depositId: d.id, status: d.status, note: `midtrans ${s.transaction_status}: nothing changed` };
    default:
      return {
        ok: true,
        depositId: d.id,
        status: d.status,
        note: `midtrans ${s.transaction_status}${note}: nothing to do yet`,
      };
  }
}
