// Own-merchant QRIS notifications, from whatever watches the merchant account:
// {deposit_id, amount_idr, reference}, authenticated by HMAC-SHA256 of the raw body. The
// reference (the payment's id at the bank) can pay one deposit only.

import * as v from 'valibot';
import { sameAmount } from '../amounts.js';
import { applyPaid, depositOf, parseNotification, refuse, type NotifyContext, type NotifyResult } from '../notify.js';
import { qrisSignatureValid } from './signature.js';

const Notification = v.strictObject({
  deposit_id: v.pipe(v.string(), v.maxLength(36)),
  amount_idr: v.union([v.pipe(v.number(), v.safeInteger(), v.minValue(1)), v.pipe(v.string(), v.regex(/^\d{1,15}$/))]),
  reference: v.pipe(v.string(), v.minLength(1), v.maxLength(128), v.regex(/^[\x21-\x7e]+$/)),
});

export async function qrisNotification(
  ctx: NotifyContext,
  secret: string,
  raw: Buffer,
  signature: string | undefined,
): Promise<NotifyResult> {
  if (!signature) return refuse(401, 'no x-signature header');
  if (!qrisSignatureValid(raw, secret, signature)) return refuse(401, 'x-signature does not verify');
  const parsed = parseNotification(Notification, raw);
  if (!parsed.ok) return parsed.refusal;
  const n = parsed.n;
  const d = await depositOf(ctx, 'qris', n.deposit_id);
  if (!d) return refuse(404, `unknown deposit ${n.deposit_id}`);
  if (!sameAmount(n.amount_idr, d.amount))
    return refuse(409, `amount_idr ${n.amount_idr} is not the invoice's ${d.amount}`, d.id);
  return applyPaid(ctx, d, 'qris', n.reference, 'qris notification');
}
