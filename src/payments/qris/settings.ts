// QRIS's variables and the settings they make, shared by its two providers (QRIS_MODE picks
// one): the light half src/config.ts reads (src/payments/provider-config.ts, ProviderConfig).

import * as v from 'valibot';
import { decimal, int, secret, type EnvVar } from '../../env-schemas.js';
import { compareDecimal, parseDecimal, type Decimal } from '../amounts.js';
import { configFail, missingVars, type Configured, type EnvValues, type ProviderConfig } from '../provider-config.js';
import { checkStaticPayload, QrisError } from './emv.js';

export const MIDTRANS_DEFAULT_URL = 'https://api.midtrans.com';

/** The variables of the method itself; each QRIS provider lists them before its own. */
export const QRIS_METHOD_ENV = {
  QRIS_MODE: {
    schema: v.optional(v.picklist(['midtrans', 'merchant'], 'QRIS_MODE must be midtrans or merchant')),
    doc: 'QRIS deposits: "midtrans" (Midtrans Core API charge) or "merchant" (own static QRIS made dynamic). Unset: QRIS off.',
  },
  IDR_PER_USD: {
    schema: decimal('IDR_PER_USD', undefined, 9, '16250'),
    doc: 'Rupiah per USD of credit, fixed on each QRIS deposit at creation (required for QRIS), e.g. 16250.',
  },
  QRIS_FEE_PCT: {
    schema: decimal('QRIS_FEE_PCT', '0', 9, '0.7'),
    doc: 'Percent of a QRIS deposit kept as a fee, taken off the credit (default 0).',
  },
  QRIS_MIN_IDR: {
    schema: int('QRIS_MIN_IDR', 10_000, 1, 1_000_000_000_000),
    doc: 'Smallest QRIS deposit in rupiah (default 10000).',
  },
  QRIS_MAX_IDR: {
    schema: int('QRIS_MAX_IDR', 10_000_000, 1, 1_000_000_000_000),
    doc: 'Largest QRIS deposit in rupiah (default 10000000).',
  },
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
  if (e.QRIS_MIN_IDR > e.QRIS_MAX_IDR)
    configFail(`QRIS_MIN_IDR (${e.QRIS_MIN_IDR}) is above QRIS_MAX_IDR (${e.QRIS_MAX_IDR})`);
  const feePct = decimalVar('QRIS_FEE_PCT', e.QRIS_FEE_PCT ?? '0');
  if (compareDecimal(feePct, { units: 100n, scale: 0 }) >= 0) configFail('QRIS_FEE_PCT must be below 100');
  if (e.IDR_PER_USD !== undefined && decimalVar('IDR_PER_USD', e.IDR_PER_USD).units === 0n)
    configFail('IDR_PER_USD must be more than 0');
  if (!e.QRIS_MODE) return null;
  const needs = missingVars(
    e.QRIS_MODE === 'midtrans'
      ? [
          ['IDR_PER_USD', e.IDR_PER_USD],
          ['MIDTRANS_SERVER_KEY', e.MIDTRANS_SERVER_KEY],
        ]
      : [
          ['IDR_PER_USD', e.IDR_PER_USD],
          ['QRIS_STATIC_PAYLOAD', e.QRIS_STATIC_PAYLOAD],
        ],
  );
  if (needs.length > 0) return { off: `QRIS (QRIS_MODE=${e.QRIS_MODE}) is off: ${needs.join(', ')} not set` };
  return {
    on: {
      mode: e.QRIS_MODE,
      idrPerUsd: decimalVar('IDR_PER_USD', e.IDR_PER_USD!),
      feePct,
      minIdr: BigInt(e.QRIS_MIN_IDR),
      maxIdr: BigInt(e.QRIS_MAX_IDR),
      midtrans:
        e.QRIS_MODE === 'midtrans'
          ? { url: (e.MIDTRANS_URL ?? MIDTRANS_DEFAULT_URL).replace(/\/+$/, ''), serverKey: e.MIDTRANS_SERVER_KEY! }
          : null,
      merchant:
        e.QRIS_MODE === 'merchant'
          ? { staticPayload: e.QRIS_STATIC_PAYLOAD!, notifySecret: e.QRIS_NOTIFY_SECRET ?? null }
          : null,
    },
  };
}

/** The merchant-code provider's light half: its variables beside the method's. */
export const qrisConfig: ProviderConfig<'qris', QrisSettings> = {
  id: 'qris',
  method: 'qris',
  methodName: 'QRIS',
  env: {
    ...QRIS_METHOD_ENV,
    QRIS_STATIC_PAYLOAD: {
      schema: v.optional(v.pipe(v.string(), v.trim())),
      doc: "The merchant's static QRIS text (required for QRIS_MODE=merchant); checked at start (TLV, static, IDR, CRC).",
    },
    QRIS_NOTIFY_SECRET: {
      schema: secret('QRIS_NOTIFY_SECRET', 16),
      doc: 'HMAC-SHA256 secret of /api/payments/qris/notify (16+ characters). Unset: only `airouter deposit confirm` confirms.',
      secret: true,
    },
  },
  settings: qrisSettings,
};
