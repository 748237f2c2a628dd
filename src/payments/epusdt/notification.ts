// epusdt notifications: exactly the protocol's fields, signed over all of them. A field more
// is refused outright: an extra field with an empty value would not change the signature.

import * as v from 'valibot';
import { numberText, sameAmount } from '../amounts.js';
import {
  applyEnded,
  applyPaid,
  depositOf,
  parseNotification,
  refuse,
  type NotifyContext,
  type NotifyResult,
} from '../notify.js';
import { epusdtSignatureValid } from './signature.js';

const text = (max: number) => v.pipe(v.string(), v.maxLength(max));

const Notification = v.strictObject({
  trade_id: text(128),
  order_id: text(32),
  amount: v.number(),
  actual_amount: v.number(),
  token: text(256),
  block_transaction_id: text(256),
  signature: text(64),
  status: v.picklist([1, 2, 3]),
});

export async function epusdtNotification(ctx: NotifyContext, token: string, raw: Buffer): Promise<NotifyResult> {
  const parsed = parseNotification(Notification, raw);
  if (!parsed.ok) return parsed.refusal;
  const n = parsed.n;
  if (!epusdtSignatureValid(n, token)) return refuse(401, 'signature does not verify');

  // The gateway sends its ids without dashes (epusdt takes 32 characters at most).
  const d = n.order_id.length === 32 ? await depositOf(ctx, 'epusdt', n.order_id) : undefined;
  if (!d) return refuse(404, `unknown order ${n.order_id}`);
  if (!sameAmount(n.amount, d.amount))
    return refuse(409, `amount ${numberText(n.amount)} is not the order's ${d.amount}`, d.id);
  if (d.external_id !== null && n.trade_id !== d.external_id)
    return refuse(409, `trade_id ${n.trade_id} is not the order's ${d.external_id}`, d.id);
  const wallet = d.details.wallet;
  if (typeof wallet === 'string' && n.token !== wallet)
    return refuse(409, `paid to wallet ${n.token}, the order's is ${wallet}`, d.id);

  switch (n.status) {
    case 2:
      // Credit the order, not actual_amount: the server nudges amounts to keep them unique.
      return applyPaid(ctx, d, 'epusdt', n.trade_id, 'epusdt paid', {
        block_transaction_id: n.block_transaction_id,
        actual_amount: numberText(n.actual_amount),
      });
    case 3:
      return applyEnded(ctx, d, 'expired', 'epusdt expired');
    default:
      return { ok: true, depositId: d.id, status: d.status, note: 'epusdt: still waiting for payment' };
  }
}
