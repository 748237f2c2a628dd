// USDT/USDC through an epusdt server: the invoice is its hosted checkout page, and its signed
// notifications confirm it.

import * as v from 'valibot';
import { nanoToUsd } from '../../billing/money.js';
import { rule } from '../../field-rules.js';
import { centsToNano, formatDecimal, usdCents, usdToPayCents } from '../amounts.js';
import { DepositError } from '../deposits.js';
import type { MethodDoc, PaymentProvider } from '../provider.js';
import { EpusdtClient } from './client.js';
import { epusdtNotification } from './notification.js';
import { EpusdtInvoice } from './shape.js';
import { epusdtConfig, type EpusdtSettings } from './settings.js';

const UsdAmount = v.pipe(
  v.union([v.number(), v.pipe(v.string(), v.trim(), v.maxLength(32))], 'must be a USD amount'),
  v.description('USD of credit, at most 2 decimals'),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const cents = usdCents(dataset.value);
    if (cents === null) {
      addIssue({
        message: rule('invalid_amount', 'must be a USD amount with at most 2 decimals, e.g. 25 or "25.50"', {
          decimals: 2,
        }),
      });
      return NEVER;
    }
    return cents;
  }),
);
const TradeType = v.pipe(
  v.string('must be a string'),
  v.description("One of deposit/info's tokens (e.g. usdt.trc20); default the first"),
  v.maxLength(64, 'must be at most 64 characters'),
);

export const EpusdtBody = v.object({ amount_usd: UsdAmount, token: v.optional(TradeType) }, 'must be a JSON object');
export type EpusdtBody = v.InferOutput<typeof EpusdtBody>;

export const epusdtDoc: MethodDoc = {
  summary: 'Open a hosted USDT/USDC checkout',
  description: 'Pay on payment_url. Past DEPOSIT_MAX_OPEN open invoices, 429.',
  answer: EpusdtInvoice,
  answered: 'Checkout opened',
};

const usdText = (cents: bigint) => formatDecimal({ units: cents, scale: 2 });

function checkBody(e: EpusdtSettings, cents: bigint, token: string | undefined): void {
  if (cents < e.minCents || cents > e.maxCents) {
    const [min, max] = [usdText(e.minCents), usdText(e.maxCents)];
    throw new DepositError(400, 'amount_out_of_range', `"amount_usd" must be from ${min} to ${max}.`, undefined, {
      param: 'amount_usd',
      reason: cents < e.minCents ? 'too_small' : 'too_large',
      params: { min, max },
    });
  }
  if (token !== undefined && !e.tradeTypes.includes(token)) {
    throw new DepositError(
      400,
      'invalid_token',
      e.tradeTypes.length
        ? `"token" must be one of ${e.tradeTypes.join(', ')}.`
        : 'This gateway offers no choice of "token"; leave it out.',
      undefined,
      {
        param: 'token',
        reason: 'not_allowed',
        params: { allowed: [...e.tradeTypes] },
      },
    );
  }
}

export const epusdt: PaymentProvider<'epusdt', EpusdtSettings, EpusdtBody> = {
  ...epusdtConfig,
  enabled: () => true,
  info: (e, expiryS) => ({
    id: 'epusdt',
    currency: 'USD',
    min: usdText(e.minCents),
    max: usdText(e.maxCents),
    rate: e.fiatUsd ? '1' : formatDecimal(e.usdtPerUsd),
    fee_pct: '0',
    expiry_s: expiryS,
    pay_currency: e.fiatUsd ? 'USD' : 'USDT',
    tokens: e.tradeTypes,
  }),
  body: EpusdtBody,
  doc: epusdtDoc,
  notifyAnswer: 'text',
  start(e) {
    const client = new EpusdtClient(e.url, e.token);
    return {
      async open(ctx, userId, { amount_usd: cents, token }): Promise<EpusdtInvoice> {
        checkBody(e, cents, token);
        const tradeType = token ?? e.tradeTypes[0] ?? null;
        const pay = formatDecimal(e.fiatUsd ? { units: cents, scale: 2 } : usdToPayCents(cents, e.usdtPerUsd));
        const currency = e.fiatUsd ? 'USD' : (tradeType?.split('.')[0].toUpperCase() ?? 'USDT');
        let d = await ctx.open({
          userId,
          terms: async () => ({
            amount: pay,
            currency,
            creditNano: centsToNano(cents),
            details: {
              usd: usdText(cents),
              rate: e.fiatUsd ? null : formatDecimal(e.usdtPerUsd),
              trade_type: tradeType,
            },
          }),
        });
        d = await ctx.attach(d, async () => {
          // epusdt takes order ids of 32 characters at most: the deposit id without its dashes.
          const o = await client.create({
            orderId: d.id.replaceAll('-', ''),
            amount: pay,
            notifyUrl: ctx.notifyUrl,
            redirectUrl: ctx.publicUrl,
            tradeType,
            fiat: e.fiatUsd ? 'USD' : null,
          });
          return {
            reference: o.tradeId,
            details: { payment_url: o.paymentUrl, wallet: o.wallet, actual_amount: o.actualAmount },
            expiresAt: o.expiresAt,
          };
        });
        return {
          id: d.id,
          status: 'pending',
          amount_usd: nanoToUsd(d.credit_nano),
          payment_url: String(d.details.payment_url),
          expires_at: d.expires_at!.toISOString(),
        };
      },
      notify: (ctx, raw) => epusdtNotification(ctx, e.token, raw),
    };
  },
};
