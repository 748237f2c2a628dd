// QRIS on the merchant's own static code (QRIS_MODE=merchant): each invoice is the static code
// with a unique amount in it, confirmed by a signed notification from whatever watches the
// merchant account (QRIS_NOTIFY_SECRET) or by the operator's `airouter deposit confirm`.

import { idrCreditNano } from '../amounts.js';
import type { PaymentProvider } from '../provider.js';
import { merchantQr, uniqueAmount } from './invoice.js';
import { checkQrisAmount, qrisInfo, qrisDoc, qrisInvoice, qrisRate, QrisBody } from './method.js';
import { qrisConfig, type QrisSettings } from './settings.js';
import { qrisNotification } from './notification.js';

export const qris: PaymentProvider<'qris', QrisSettings, QrisBody> = {
  ...qrisConfig,
  enabled: (q) => q.mode === 'merchant',
  info: qrisInfo,
  body: QrisBody,
  doc: qrisDoc,
  notifyAnswer: 'json',
  start(q) {
    const merchant = q.merchant!;
    const secretKey = merchant.notifySecret;
    return {
      async open(ctx, userId, { amount_idr }) {
        checkQrisAmount(q, amount_idr);
        const d = await ctx.open({
          userId,
          // The amount is picked inside the deposit's own transaction: unique among open invoices.
          terms: async (tx) => {
            const amount = await uniqueAmount(tx, amount_idr);
            const qr = merchantQr(merchant.staticPayload, amount);
            return {
              amount: amount.toString(),
              currency: 'IDR',
              creditNano: idrCreditNano(amount, q.idrPerUsd, q.feePct),
              details: { ...qrisRate(q, amount_idr), qr_string: qr },
            };
          },
        });
        return qrisInvoice(d);
      },
      notify: secretKey ? (ctx, raw, headers) => qrisNotification(ctx, secretKey, raw, headers['x-signature']) : null,
    };
  },
};
