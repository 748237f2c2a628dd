// The QRIS deposit method, shared by the two providers that serve it: midtrans (a Midtrans Core
// API charge) and qris (the merchant's own static code made dynamic). QRIS_MODE picks which one;
// both take whole rupiah at the rate and fee fixed when the invoice is opened, and answer with
// the same invoice. A third QRIS provider would add its mode here.

import * as v from 'valibot';
import { nanoToUsd } from '../../billing/money.js';
import { rule } from '../../dashboard/schemas.js';
import { decimal, int, type EnvVar } from '../../env-schemas.js';
import { compareDecimal, formatDecimal, parseDecimal, type Decimal } from '../amounts.js';
import { DepositError, type DepositRow } from '../deposits.js';
import { configFail, missingVars, type Configured, type EnvValues } from '../provider.js';
import { qrPngDataUrl } from '../qr-image.js';
import { checkStaticPayload, QrisError } from './emv.js';

export const MIDTRANS_DEFAULT_URL = 'https://api.midtrans.com';

/** The variables of the method itself; each QRIS provider lists them before its own. */
export const QRIS_METHOD_ENV = {
  QRIS_MODE: {
    schema: v.optional(v.picklist(['midtrans', 'merchant'], 'QRIS_MODE must be midtrans or merchant')),
    doc: 'QRIS deposits: "midtrans" (Midtrans Core API charge) or "merchant" (own static QRIS made dynamic). Unset: QRIS off.',
  },
  IDR_PER_USD: { schema: decimal('IDR_PER_USD', undefined, 9, '16250'), doc: 'Rupiah per USD of credit, fixed on each QRIS deposit at creation (required for QRIS), e.g. 16250.' },
  QRIS_FEE_PCT: { schema: decimal('QRIS_FEE_PCT', '0', 9, '0.7'), doc: 'Percent of a QRIS deposit kept as a fee, taken off the credit (default 0).' },
  QRIS_MIN_IDR: { schema: int('QRIS_MIN_IDR', 10_000, 1, 1_000_000_000_000), doc: 'Smallest QRIS deposit in rupiah (default 10000).' },
  QRIS_MAX_IDR: { schema: int('QRIS_MAX_IDR', 10_000_000, 1, 1_000_000_000_000), doc: 'Largest QRIS deposit in rupiah (default 10000000).' },
} satisfies Record<string, EnvVar>;

export interface QrisSettings {
  mode: 'midtrans' | 'merchant';
  idrPerUsd: Decimal;
  feePct: Decimal;
  minIdr: bigint;
  maxIdr: bigint;
  midtrans: { url: string; serverKey: string } | null;
  merchant: { staticPayload: string; notifySecret: string | null } | null;
}

/** The variables as src/config.ts validated them. */
interface QrisEnv {
  QRIS_MODE?: 'midtrans' | 'merchant';
  IDR_PER_USD?: string;
  QRIS_FEE_PCT?: string;
  QRIS_MIN_IDR: number;
  QRIS_MAX_IDR: number;
  MIDTRANS_URL?: string;
  MIDTRANS_SERVER_KEY?: string;
  QRIS_STATIC_PAYLOAD?: string;
  QRIS_NOTIFY_SECRET?: string;
}

const decimalVar = (name: string, text: string) => parseDecimal(text) ?? configFail(`${name} is not a decimal number`);

/** Values that are present are checked whether or not QRIS is on: a wrong one stops start-up either way. */
export function qrisSettings(env: EnvValues): Configured<QrisSettings> {
  const e = env as unknown as QrisEnv;
  if (e.QRIS_STATIC_PAYLOAD) {
    try {
      checkStaticPayload(e.QRIS_STATIC_PAYLOAD);
    } catch (err) {
      if (err instanceof QrisError) configFail(`QRIS_STATIC_PAYLOAD is not a usable static QRIS code: ${err.message}`);
      throw err;
    }
  }
  if (e.QRIS_MIN_IDR > e.QRIS_MAX_IDR) configFail(`QRIS_MIN_IDR (${e.QRIS_MIN_IDR}) is above QRIS_MAX_IDR (${e.QRIS_MAX_IDR})`);
  const feePct = decimalVar('QRIS_FEE_PCT', e.QRIS_FEE_PCT ?? '0');
  if (compareDecimal(feePct, { units: 100n, scale: 0 }) >= 0) configFail('QRIS_FEE_PCT must be below 100');
  if (e.IDR_PER_USD !== undefined && decimalVar('IDR_PER_USD', e.IDR_PER_USD).units === 0n) configFail('IDR_PER_USD must be more than 0');
  if (!e.QRIS_MODE) return null;
  const needs = missingVars(
    e.QRIS_MODE === 'midtrans'
      ? [['IDR_PER_USD', e.IDR_PER_USD], ['MIDTRANS_SERVER_KEY', e.MIDTRANS_SERVER_KEY]]
      : [['IDR_PER_USD', e.IDR_PER_USD], ['QRIS_STATIC_PAYLOAD', e.QRIS_STATIC_PAYLOAD]],
  );
  if (needs.length > 0) return { off: `QRIS (QRIS_MODE=${e.QRIS_MODE}) is off: ${needs.join(', ')} not set` };
  return {
    on: {
      mode: e.QRIS_MODE,
      idrPerUsd: decimalVar('IDR_PER_USD', e.IDR_PER_USD!),
      feePct,
      minIdr: BigInt(e.QRIS_MIN_IDR),
      maxIdr: BigInt(e.QRIS_MAX_IDR),
      midtrans: e.QRIS_MODE === 'midtrans' ? { url: (e.MIDTRANS_URL ?? MIDTRANS_DEFAULT_URL).replace(/\/+$/, ''), serverKey: e.MIDTRANS_SERVER_KEY! } : null,
      merchant: e.QRIS_MODE === 'merchant' ? { staticPayload: e.QRIS_STATIC_PAYLOAD!, notifySecret: e.QRIS_NOTIFY_SECRET ?? null } : null,
    },
  };
}

// A JSON number or its decimal text, compared and converted exactly later.
const WholeRupiah = v.pipe(
  v.union([v.pipe(v.number(), v.safeInteger()), v.pipe(v.string(), v.trim(), v.regex(/^\d{1,15}$/))], rule('not_integer', 'must be a whole number of rupiah')),
  v.transform((x) => BigInt(x)),
);

export const QrisBody = v.object({ amount_idr: WholeRupiah }, 'must be a JSON object');
export type QrisBody = v.InferOutput<typeof QrisBody>;

export const qrisInfo = (q: QrisSettings, expiryS: number) => ({
  id: 'qris', currency: 'IDR', min: q.minIdr.toString(), max: q.maxIdr.toString(),
  rate: formatDecimal(q.idrPerUsd), fee_pct: formatDecimal(q.feePct), expiry_s: expiryS,
});

export function checkQrisAmount(q: QrisSettings, amountIdr: bigint): void {
  if (amountIdr < q.minIdr || amountIdr > q.maxIdr) {
    throw new DepositError(400, 'amount_out_of_range', `"amount_idr" must be from ${q.minIdr} to ${q.maxIdr} rupiah.`, undefined, {
      param: 'amount_idr', reason: amountIdr < q.minIdr ? 'too_small' : 'too_large', params: { min: String(q.minIdr), max: String(q.maxIdr) },
    });
  }
}

/** What the deposit records of the terms fixed at creation. */
export const qrisRate = (q: QrisSettings, amountIdr: bigint) => ({ rate_idr_per_usd: formatDecimal(q.idrPerUsd), fee_pct: formatDecimal(q.feePct), requested_idr: amountIdr.toString() });

export interface QrisInvoice {
  id: string;
  status: 'pending';
  amount_idr: number;
  credit_usd: string;
  qr_string: string;
  qr_png: string;
  expires_at: string;
}

export async function qrisInvoice(d: DepositRow): Promise<QrisInvoice> {
  const qr = String(d.details.qr_string);
  return {
    id: d.id, status: 'pending', amount_idr: Number(d.amount), credit_usd: nanoToUsd(d.credit_nano),
    qr_string: qr, qr_png: await qrPngDataUrl(qr), expires_at: d.expires_at!.toISOString(),
  };
}
