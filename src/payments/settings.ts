// Which deposit methods the environment enables, with their parameters parsed exactly. A method
// is on only when its settings are complete; a method asked for but incomplete is off, with the
// reason kept for a warning at start. Values that are present but wrong stop start-up.

import { compareDecimal, parseDecimal, usdCents, usdToPayCents, type Decimal } from './amounts.js';
import { checkStaticPayload, QrisError } from './qris/emv.js';

export class PaymentConfigError extends Error {}

export const MIDTRANS_DEFAULT_URL = 'https://api.midtrans.com';

export interface QrisSettings {
  mode: 'midtrans' | 'merchant';
  idrPerUsd: Decimal;
  feePct: Decimal;
  minIdr: bigint;
  maxIdr: bigint;
  midtrans: { url: string; serverKey: string } | null;
  merchant: { staticPayload: string; notifySecret: string | null } | null;
}

export interface EpusdtSettings {
  url: string;
  token: string;
  minCents: bigint;
  maxCents: bigint;
  fiatUsd: boolean;
  usdtPerUsd: Decimal;
  /** trade_type values a user may choose; empty: none is sent. */
  tradeTypes: string[];
}

export interface PaymentSettings {
  publicUrl: string;
  expiryS: number;
  maxOpen: number;
  qris: QrisSettings | null;
  epusdt: EpusdtSettings | null;
  /** Methods asked for but left off, and why. */
  disabled: string[];
}

const missing = (pairs: [string, unknown][]) => pairs.filter(([, v]) => v === undefined || v === '').map(([k]) => k);

export function notifyUrl(publicUrl: string, provider: string): string {
  return `${publicUrl}/api/payments/${provider}/notify`;
}

/**
 * The payment variables as src/config.ts has validated them (declared here, not imported, so
 * that configuration depends on payments and not the other way round).
 */
export interface PaymentEnv {
  DEPOSIT_EXPIRY_S: number;
  DEPOSIT_MAX_OPEN: number;
  QRIS_MODE?: 'midtrans' | 'merchant';
  IDR_PER_USD?: string;
  QRIS_FEE_PCT?: string;
  QRIS_MIN_IDR: number;
  QRIS_MAX_IDR: number;
  MIDTRANS_URL?: string;
  MIDTRANS_SERVER_KEY?: string;
  QRIS_STATIC_PAYLOAD?: string;
  QRIS_NOTIFY_SECRET?: string;
  EPUSDT_URL?: string;
  EPUSDT_TOKEN?: string;
  EPUSDT_MIN_USD?: string;
  EPUSDT_MAX_USD?: string;
  EPUSDT_FIAT_USD: boolean;
  USDT_PER_USD?: string;
  EPUSDT_TRADE_TYPES?: string;
}

export function paymentSettings(e: PaymentEnv, publicUrl: string): PaymentSettings {
  const disabled: string[] = [];
  const decimal = (name: string, text: string) => parseDecimal(text) ?? fail(`${name} is not a decimal number`);

  let qris: QrisSettings | null = null;
  if (e.QRIS_STATIC_PAYLOAD) {
    try {
      checkStaticPayload(e.QRIS_STATIC_PAYLOAD);
    } catch (err) {
      if (err instanceof QrisError) fail(`QRIS_STATIC_PAYLOAD is not a usable static QRIS code: ${err.message}`);
      throw err;
    }
  }
  if (e.QRIS_MIN_IDR > e.QRIS_MAX_IDR) fail(`QRIS_MIN_IDR (${e.QRIS_MIN_IDR}) is above QRIS_MAX_IDR (${e.QRIS_MAX_IDR})`);
  const feePct = decimal('QRIS_FEE_PCT', e.QRIS_FEE_PCT ?? '0');
  if (compareDecimal(feePct, { units: 100n, scale: 0 }) >= 0) fail('QRIS_FEE_PCT must be below 100');
  if (e.IDR_PER_USD !== undefined && decimal('IDR_PER_USD', e.IDR_PER_USD).units === 0n) fail('IDR_PER_USD must be more than 0');
  if (e.QRIS_MODE) {
    const needs = missing(
      e.QRIS_MODE === 'midtrans'
        ? [['IDR_PER_USD', e.IDR_PER_USD], ['MIDTRANS_SERVER_KEY', e.MIDTRANS_SERVER_KEY]]
        : [['IDR_PER_USD', e.IDR_PER_USD], ['QRIS_STATIC_PAYLOAD', e.QRIS_STATIC_PAYLOAD]],
    );
    if (needs.length > 0) disabled.push(`QRIS (QRIS_MODE=${e.QRIS_MODE}) is off: ${needs.join(', ')} not set`);
    else {
      qris = {
        mode: e.QRIS_MODE,
        idrPerUsd: decimal('IDR_PER_USD', e.IDR_PER_USD!),
        feePct,
        minIdr: BigInt(e.QRIS_MIN_IDR),
        maxIdr: BigInt(e.QRIS_MAX_IDR),
        midtrans: e.QRIS_MODE === 'midtrans' ? { url: (e.MIDTRANS_URL ?? MIDTRANS_DEFAULT_URL).replace(/\/+$/, ''), serverKey: e.MIDTRANS_SERVER_KEY! } : null,
        merchant: e.QRIS_MODE === 'merchant' ? { staticPayload: e.QRIS_STATIC_PAYLOAD!, notifySecret: e.QRIS_NOTIFY_SECRET ?? null } : null,
      };
    }
  }

  let epusdt: EpusdtSettings | null = null;
  const minCents = usdCents(e.EPUSDT_MIN_USD ?? '1')!;
  const maxCents = usdCents(e.EPUSDT_MAX_USD ?? '10000')!;
  const usdtPerUsd = decimal('USDT_PER_USD', e.USDT_PER_USD ?? '1');
  if (usdtPerUsd.units === 0n) fail('USDT_PER_USD must be more than 0');
  if (minCents > maxCents) fail(`EPUSDT_MIN_USD (${e.EPUSDT_MIN_USD}) is above EPUSDT_MAX_USD (${e.EPUSDT_MAX_USD})`);
  // epusdt takes amounts above 0.01 only.
  const smallest = e.EPUSDT_FIAT_USD ? { units: minCents, scale: 2 } : usdToPayCents(minCents, usdtPerUsd);
  if (compareDecimal(smallest, { units: 1n, scale: 2 }) <= 0) fail('EPUSDT_MIN_USD must make an amount above 0.01');
  if (e.EPUSDT_URL || e.EPUSDT_TOKEN) {
    const needs = missing([['EPUSDT_URL', e.EPUSDT_URL], ['EPUSDT_TOKEN', e.EPUSDT_TOKEN]]);
    if (needs.length > 0) disabled.push(`epusdt is off: ${needs.join(', ')} not set`);
    else {
      epusdt = {
        url: e.EPUSDT_URL!.replace(/\/+$/, ''),
        token: e.EPUSDT_TOKEN!,
        minCents,
        maxCents,
        fiatUsd: e.EPUSDT_FIAT_USD,
        usdtPerUsd,
        tradeTypes: e.EPUSDT_TRADE_TYPES ? [...new Set(e.EPUSDT_TRADE_TYPES.split(','))] : [],
      };
    }
  }
  return { publicUrl, expiryS: e.DEPOSIT_EXPIRY_S, maxOpen: e.DEPOSIT_MAX_OPEN, qris, epusdt, disabled };
}

function fail(message: string): never {
  throw new PaymentConfigError(message);
}
