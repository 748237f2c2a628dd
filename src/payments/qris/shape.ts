// The answer to opening a QRIS invoice (POST /api/dashboard/deposits/qris), whichever provider
// serves the method: the one schema its type, the dashboard's OpenAPI and the web client's types
// come from. No Node imports: the web app's type check reads it.

import * as v from 'valibot';
import { Id, Instant, Money } from '../../shape-pieces.js';

export const QrisInvoice = v.object({
  id: Id,
  status: v.literal('pending'),
  amount_idr: v.pipe(v.number(), v.integer(), v.description('Rupiah to pay')),
  credit_usd: Money('Credited when paid'),
  qr_string: v.pipe(v.string(), v.description('The QRIS payload (EMVCo text)')),
  qr_png: v.pipe(v.string(), v.regex(/^data:image\/png;base64,/), v.description('The same as a PNG data URL')),
  expires_at: Instant('Pay before this'),
});
export type QrisInvoice = v.InferOutput<typeof QrisInvoice>;
