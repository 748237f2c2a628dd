// The answer to opening an epusdt checkout (POST /api/dashboard/deposits/epusdt): the one schema
// its type, the dashboard's OpenAPI and the web client's types come from. No Node imports: the
// web app's type check reads it.

import * as v from 'valibot';
import { Id, Instant, Money } from '../../shape-pieces.js';

export const EpusdtInvoice = v.object({
  id: Id,
  status: v.literal('pending'),
  amount_usd: Money('Credited when paid'),
  payment_url: v.pipe(v.string(), v.description('The hosted checkout page')),
  expires_at: Instant('Pay before this'),
});
export type EpusdtInvoice = v.InferOutput<typeof EpusdtInvoice>;
