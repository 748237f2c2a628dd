// The dashboard API's answers about money: the catalogue's prices, the balance, deposits and
// the invoices that open them (their request bodies are validated by ../schemas.ts). No Node
// imports: the web app takes its types from here (the deposit methods come from the payment
// providers' light halves, which import no Node either).

import * as v from 'valibot';
import { MODEL_KINDS } from '../../catalogue/schema.js';
import { DEPOSIT_METHODS } from '../../payments/configs.js';
import { Count, Id, Instant, Money, NullableInstant } from '../../shape-pieces.js';

const Pricing = v.pipe(
  v.object({ input: v.number(), output: v.number(), cache_read: v.number(), cache_write: v.number() }),
  v.description('USD per million tokens'),
);

export const CatalogueModel = v.object({
  id: v.string(),
  display_name: v.string(),
  owned_by: v.string(),
  context_window: v.pipe(v.number(), v.integer()),
  max_output_tokens: v.pipe(v.number(), v.integer(), v.description('0 for an embedding model')),
  kind: v.pipe(
    v.picklist(MODEL_KINDS),
    v.description('chat: the chat surfaces; embedding: POST /v1/embeddings (input prices only)'),
  ),
  dimensions: v.nullable(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.description('Embedding models: the length of their vectors, when the catalogue says'),
    ),
  ),
  pricing: Pricing,
  official_pricing: Pricing,
  discount_pct: v.pipe(
    v.number(),
    v.integer(),
    v.description('round((1 − pricing.input / official_pricing.input) × 100); 0 without an official input price'),
  ),
});
/** GET /catalog, and GET /api/public/models for the landing page. */
export const Catalog = v.object({ data: v.array(CatalogueModel) });

export const Balance = v.object({
  currency: v.literal('USD'),
  balance_usd: Money('Balance'),
  reserved_usd: Money(
    'Held for requests in flight, and by the leases of other gateway processes (handed back within LEASE_WINDOW_MS of their last request)',
  ),
  available_usd: Money('balance − reserved'),
  is_admin: v.optional(
    v.pipe(
      v.boolean(),
      v.description('The account may use the admin API (/api/admin/*); the dashboard shows its admin pages on it'),
    ),
  ),
});

const DEPOSIT_STATUSES = ['pending', 'paid', 'expired', 'failed'] as const;
const DepositEntries = {
  id: Id,
  method: v.string(),
  status: v.picklist(DEPOSIT_STATUSES),
  amount: v.pipe(v.string(), v.description('Amount to pay in the deposit currency, decimal string')),
  currency: v.string(),
  credit_usd: Money('Credited (or to be credited) to the balance'),
  created_at: Instant('Creation time'),
  paid_at: NullableInstant('When it was paid'),
};
export const Deposit = v.object(DepositEntries);
export const DepositPage = v.object({ data: v.array(Deposit), next_cursor: v.nullable(v.string()) });
/** GET /deposits/{id}: a deposit with what is needed to pay it while pending. */
export const DepositDetail = v.object({
  ...DepositEntries,
  expires_at: NullableInstant('When an unpaid invoice expires'),
  qr_string: v.nullable(v.pipe(v.string(), v.description('While pending, for QRIS'))),
  qr_png: v.nullable(v.pipe(v.string(), v.description('While pending, for QRIS: PNG data URL'))),
  payment_url: v.nullable(v.pipe(v.string(), v.description('While pending, for epusdt'))),
});

export const DepositMethod = v.object({
  id: v.pipe(v.picklist(DEPOSIT_METHODS), v.description('qris: POST /topup/qris; epusdt: POST /deposit/epusdt/create')),
  currency: v.pipe(v.string(), v.description('Currency of the amount asked for (IDR for qris, USD for epusdt)')),
  min: v.pipe(v.string(), v.description('Smallest amount, decimal string in currency')),
  max: v.pipe(v.string(), v.description('Largest amount, decimal string in currency')),
  rate: v.pipe(v.string(), v.description('qris: rupiah per USD of credit; epusdt: pay_currency units per USD')),
  fee_pct: v.pipe(v.string(), v.description('Percent taken off the credit')),
  expiry_s: Count('Seconds an invoice stays payable'),
  pay_currency: v.optional(
    v.pipe(v.string(), v.description('epusdt: what the checkout asks for (USD when the server converts itself)')),
  ),
  tokens: v.optional(
    v.pipe(v.array(v.string()), v.description('epusdt: the coins/networks one may pick (token); empty: no choice')),
  ),
});
/** GET /deposit/info: only methods whose configuration is complete are listed. */
export const DepositMethods = v.object({ methods: v.array(DepositMethod) });

// Each deposit method's invoice is its folder's (one schema for the provider, this API and the web).
export { QrisInvoice } from '../../payments/qris/shape.js';
export { EpusdtInvoice } from '../../payments/epusdt/shape.js';

export type CatalogueModelT = v.InferOutput<typeof CatalogueModel>;
export type CatalogT = v.InferOutput<typeof Catalog>;
export type BalanceT = v.InferOutput<typeof Balance>;
export type DepositT = v.InferOutput<typeof Deposit>;
export type DepositPageT = v.InferOutput<typeof DepositPage>;
export type DepositDetailT = v.InferOutput<typeof DepositDetail>;
export type DepositMethodT = v.InferOutput<typeof DepositMethod>;
export type DepositMethodsT = v.InferOutput<typeof DepositMethods>;
export type { QrisInvoice as QrisInvoiceT } from '../../payments/qris/shape.js';
export type { EpusdtInvoice as EpusdtInvoiceT } from '../../payments/epusdt/shape.js';
