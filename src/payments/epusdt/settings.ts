// epusdt's variables and the settings they make. Values that are present are checked whether
// or not epusdt is on: a wrong one stops start-up either way.

import * as v from 'valibot';
import { decimal, flag, secret, url, type EnvVar } from '../../env-schemas.js';
import { compareDecimal, parseDecimal, usdCents, usdToPayCents, type Decimal } from '../amounts.js';
import { configFail, missingVars, type Configured, type EnvValues, type ProviderConfig } from '../provider-config.js';

export const EPUSDT_ENV = {
  EPUSDT_URL: {
    schema: url('EPUSDT_URL', ['http:', 'https:']),
    doc: 'epusdt server base; the gateway appends /api/v1/order/create-transaction. With EPUSDT_TOKEN, enables USDT/USDC deposits.',
  },
  EPUSDT_TOKEN: {
    schema: secret('EPUSDT_TOKEN', 8),
    doc: 'epusdt merchant API token: signs orders and verifies notifications.',
    secret: true,
  },
  EPUSDT_MIN_USD: {
    schema: decimal('EPUSDT_MIN_USD', '1', 2, '5'),
    doc: 'Smallest epusdt deposit in USD (default 1).',
  },
  EPUSDT_MAX_USD: {
    schema: decimal('EPUSDT_MAX_USD', '10000', 2, '1000'),
    doc: 'Largest epusdt deposit in USD (default 10000).',
  },
  EPUSDT_FIAT_USD: {
    schema: flag('EPUSDT_FIAT_USD'),
    doc: 'true when the epusdt server takes fiat=USD and converts itself; else amounts are sent as USDT at USDT_PER_USD (default false).',
  },
  USDT_PER_USD: {
    schema: decimal('USDT_PER_USD', '1', 9, '1.002'),
    doc: 'USDT asked per USD of credit when EPUSDT_FIAT_USD is false (default 1), rounded up to the cent.',
  },
  EPUSDT_TRADE_TYPES: {
    schema: v.optional(
      v.pipe(
        v.string(),
        v.trim(),
        v.regex(
          /^[a-z0-9]+\.[a-z0-9]+(,[a-z0-9]+\.[a-z0-9]+)*$/,
          'EPUSDT_TRADE_TYPES must be a comma-separated list such as usdt.trc20,usdc.solana',
        ),
      ),
    ),
    doc: 'Coins/networks a user may pick (sent as trade_type), e.g. usdt.trc20,usdc.solana; the first is the default. Unset: no trade_type sent.',
  },
} satisfies Record<string, EnvVar>;

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

/** The variables as src/config.ts validated them. */
interface EpusdtEnv {
  EPUSDT_URL?: string;
  EPUSDT_TOKEN?: string;
  EPUSDT_MIN_USD?: string;
  EPUSDT_MAX_USD?: string;
  EPUSDT_FIAT_USD: boolean;
  USDT_PER_USD?: string;
  EPUSDT_TRADE_TYPES?: string;
}

export function epusdtSettings(env: EnvValues): Configured<EpusdtSettings> {
  const e = env as unknown as EpusdtEnv;
  const minCents = usdCents(e.EPUSDT_MIN_USD ?? '1')!;
  const maxCents = usdCents(e.EPUSDT_MAX_USD ?? '10000')!;
  const usdtPerUsd = parseDecimal(e.USDT_PER_USD ?? '1') ?? configFail('USDT_PER_USD is not a decimal number');
  if (usdtPerUsd.units === 0n) configFail('USDT_PER_USD must be more than 0');
  if (minCents > maxCents)
    configFail(`EPUSDT_MIN_USD (${e.EPUSDT_MIN_USD}) is above EPUSDT_MAX_USD (${e.EPUSDT_MAX_USD})`);
  // epusdt takes amounts above 0.01 only.
  const smallest = e.EPUSDT_FIAT_USD ? { units: minCents, scale: 2 } : usdToPayCents(minCents, usdtPerUsd);
  if (compareDecimal(smallest, { units: 1n, scale: 2 }) <= 0)
    configFail('EPUSDT_MIN_USD must make an amount above 0.01');
  if (!e.EPUSDT_URL && !e.EPUSDT_TOKEN) return null;
  const needs = missingVars([
    ['EPUSDT_URL', e.EPUSDT_URL],
    ['EPUSDT_TOKEN', e.EPUSDT_TOKEN],
  ]);
  if (needs.length > 0) return { off: `epusdt is off: ${needs.join(', ')} not set` };
  return {
    on: {
      url: e.EPUSDT_URL!.replace(/\/+$/, ''),
      token: e.EPUSDT_TOKEN!,
      minCents,
      maxCents,
      fiatUsd: e.EPUSDT_FIAT_USD,
      usdtPerUsd,
      tradeTypes: e.EPUSDT_TRADE_TYPES ? [...new Set(e.EPUSDT_TRADE_TYPES.split(','))] : [],
    },
  };
}

/** epusdt's light half (src/payments/provider-config.ts, ProviderConfig). */
export const epusdtConfig: ProviderConfig<'epusdt', EpusdtSettings> = {
  id: 'epusdt',
  method: 'epusdt',
  methodName: 'USDT/USDC',
  env: EPUSDT_ENV,
  settings: epusdtSettings,
};
