// QRIS through Midtrans (QRIS_MODE=midtrans): the invoice is a Midtrans Core API charge, and
// Midtrans' notifications, read back from its status API, confirm it.

import type { PaymentProvider } from '../provider.js';
import { checkQrisAmount, qrisInfo, qrisDoc, qrisInvoice, qrisRate, QrisBody } from '../qris/method.js';
import type { QrisSettings } from '../qris/settings.js';
import { midtransConfig } from './settings.js';
import { idrCreditNano } from '../amounts.js';
import { MidtransClient } from './client.js';
import { midtransNotification } from './notification.js';

export const midtrans: PaymentProvider<'qris', QrisSettings, QrisBody> = {
  ...midtransConfig,
  enabled: (q) => q.mode === 'midtrans',
  info: qrisInfo,
  body: QrisBody,
  doc: qrisDoc,
  notifyAnswer: 'json',
  start(q) {
    const m = q.midtrans!;
    const client = new MidtransClient(m.url, m.serverKey);
    return {
      async open(ctx, userId, { amount_idr }) {
        checkQrisAmount(q, amount_idr);
        let d = await ctx.open({
          userId,
          terms: async () => ({
            amount: amount_idr.toString(),
            currency: 'IDR',
            creditNano: idrCreditNano(amount_idr, q.idrPerUsd, q.feePct),
            details: qrisRate(q, amount_idr),
          }),
        });
        d = await ctx.attach(d, async () => {
          const c = await client.charge({
            orderId: d.id,
            grossAmount: amount_idr,
            expiryS: ctx.expiryS,
            notifyUrl: ctx.notifyUrl,
          });
          return { reference: c.transactionId, details: { qr_string: c.qrString } };
        });
        return qrisInvoice(d);
      },
      notify: (ctx, raw) => midtransNotification(ctx, client, m.serverKey, raw),
    };
  },
};
