// The QRIS deposit method, shared by the two providers that serve it: midtrans (a Midtrans Core
// API charge) and qris (the merchant's own static code made dynamic). QRIS_MODE picks which one;
// both take whole rupiah at the rate and fee fixed when the invoice is opened, and answer with
// the same invoice. A third QRIS provider would add its mode here.

import * as v from 'valibot';
import { nanoToUsd } from '../../billing/money.js';
import { rule } from '../../field-rules.js';
import { formatDecimal } from '../amounts.js';
import { DepositError, type DepositRow } from '../deposits.js';
import type { QrisSettings } from './settings.js';
import { qrPngDataUrl } from '../qr-image.js';
import { QrisInvoice } from './shape.js';
import type { MethodDoc } from '../provider.js';

// A JSON number or its decimal text, compared and converted exactly later.
const WholeRupiah = v.pipe(
  v.union(
    [v.pipe(v.number(), v.safeInteger()), v.pipe(v.string(), v.trim(), v.regex(/^\d{1,15}$/))],
    rule('not_integer', 'must be a whole number of rupiah'),
  ),
  v.description('Whole rupiah'),
  v.transform((x) => BigInt(x)),
);

export const QrisBody = v.object({ amount_idr: WholeRupiah }, 'must be a JSON object');
export type QrisBody = v.InferOutput<typeof QrisBody>;

export const qrisDoc: MethodDoc = {
  summary: 'Open a QRIS invoice in rupiah',
  description:
    'Rate, fee and expiry are fixed now. With an own-merchant QRIS code the amount to pay is amount_idr plus a small suffix (1-999) that tells open invoices apart; ' +
    'amount_idr in the answer is what to pay, and the credit is computed from it. Past DEPOSIT_MAX_OPEN open invoices, 429.',
  answer: QrisInvoice,
  answered: 'Invoice opened',
};

export const qrisInfo = (q: QrisSettings, expiryS: number) => ({
  id: 'qris',
  currency: 'IDR',
  min: q.minIdr.toString(),
  max: q.maxIdr.toString(),
  rate: formatDecimal(q.idrPerUsd),
  fee_pct: formatDecimal(q.feePct),
  expiry_s: expiryS,
});

export function checkQrisAmount(q: QrisSettings, amountIdr: bigint): void {
  if (amountIdr < q.minIdr || amountIdr > q.maxIdr) {
    throw new DepositError(
      400,
      'amount_out_of_range',
      `"amount_idr" must be from ${q.minIdr} to ${q.maxIdr} rupiah.`,
      undefined,
      {
        param: 'amount_idr',
        reason: amountIdr < q.minIdr ? 'too_small' : 'too_large',
        params: { min: String(q.minIdr), max: String(q.maxIdr) },
      },
    );
  }
}

/** What the deposit records of the terms fixed at creation. */
export const qrisRate = (q: QrisSettings, amountIdr: bigint) => ({
  rate_idr_per_usd: formatDecimal(q.idrPerUsd),
  fee_pct: formatDecimal(q.feePct),
  requested_idr: amountIdr.toString(),
});

export async function qrisInvoice(d: DepositRow): Promise<QrisInvoice> {
  const qr = String(d.details.qr_string);
  return {
    id: d.id,
    status: 'pending',
    amount_idr: Number(d.amount),
    credit_usd: nanoToUsd(d.credit_nano),
    qr_string: qr,
    qr_png: await qrPngDataUrl(qr),
    expires_at: d.expires_at!.toISOString(),
  };
}
