// QRIS on the merchant's own static code (QRIS_MODE=merchant): each invoice is the static code
// with a unique amount in it, confirmed by a signed notification from whatever watches the
// merchant account (QRIS_NOTIFY_SECRET) or by the operator's `airouter deposit confirm`.

import * as v from 'valibot';
import { secret } from '../../env-schemas.js';
import { idrCreditNano } from '../amounts.js';
import type { PaymentProvider } from '../provider.js';
import { merchantQr, uniqueAmount } from './invoice.js';
import { checkQrisAmount, QRIS_METHOD_ENV, qrisInfo, qrisInvoice, qrisRate, qrisSettings, QrisBody, type QrisSettings } from './method.js';
import { qrisNotification } from './notification.js';

export const qris: PaymentProvider<'qris', QrisSettings, QrisBody> = {
  id: 'qris',
  method: 'qris',
  methodName: 'QRIS',
  env: {
    ...QRIS_METHOD_ENV,
    QRIS_STATIC_PAYLOAD: {
      schema: v.optional(v.pipe(v.string(), v.trim())),
      doc: 'The merchant\'s static QRIS text (required for QRIS_MODE=merchant); checked at start (TLV, static, IDR, CRC).',
    },
    QRIS_NOTIFY_SECRET: {
      schema: secret('QRIS_NOTIFY_SECRET', 16),
      doc: 'HMAC-SHA256 secret of /api/payments/qris/notify (16+ characters). Unset: only `airouter deposit confirm` confirms.',
      secret: true,
    },
  },
  settings: qrisSettings,
  enabled: (q) => q.mode === 'merchant',
  info: qrisInfo,
  body: QrisBody,
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
            return { amount: amount.toString(), currency: 'IDR', creditNano: idrCreditNano(amount, q.idrPerUsd, q.feePct), details: { ...qrisRate(q, amount_idr), qr_string: qr } };
          },
        });
        return qrisInvoice(d);
      },
      notify: secretKey ? (ctx, raw, headers) => qrisNotification(ctx, secretKey, raw, headers['x-signature']) : null,
    };
  },
};
