// Deposits as the dashboard and the notification routes see them: what is on offer, opening an
// invoice with a provider, reading one back, and handing notifications to their provider.

import type { Logger } from 'pino';
import { nanoToUsd } from '../billing/money.js';
import type { HotStore } from '../store/hot.js';
import type { Sql } from '../store/sql.js';
import { centsToNano, formatDecimal, idrCreditNano, usdToPayCents } from './amounts.js';
import { attachProviderOrder, DepositError, findDeposit, markEnded, openDeposit, sweepExpired, type DepositRow, type Provider } from './deposits.js';
import { EpusdtClient } from './epusdt/client.js';
import { epusdtNotification } from './epusdt/notification.js';
import { ProviderError } from './http.js';
import { MidtransClient } from './midtrans/client.js';
import { midtransNotification } from './midtrans/notification.js';
import { refuse, type NotifyContext, type NotifyResult } from './notify.js';
import { qrPngDataUrl } from './qr-image.js';
import { merchantQr, uniqueAmount } from './qris/invoice.js';
import { qrisNotification } from './qris/notification.js';
import { notifyUrl, type PaymentSettings } from './settings.js';

export const PROVIDERS: readonly Provider[] = ['midtrans', 'qris', 'epusdt'];

export interface QrisInvoice {
  id: string;
  status: 'pending';
  amount_idr: number;
  credit_usd: string;
  qr_string: string;
  qr_png: string;
  expires_at: string;
}

export interface EpusdtInvoice {
  id: string;
  status: 'pending';
  amount_usd: string;
  payment_url: string;
  expires_at: string;
}

const unavailable = () => new DepositError(502, 'provider_error', 'The payment provider could not open the invoice; try again shortly.');

export class Payments {
  private readonly midtrans: MidtransClient | null;
  private readonly epusdt: EpusdtClient | null;

  constructor(
    private readonly sql: Sql,
    private readonly hot: HotStore,
    private readonly log: Logger,
    readonly settings: PaymentSettings,
  ) {
    const m = settings.qris?.midtrans;
    this.midtrans = m ? new MidtransClient(m.url, m.serverKey) : null;
    this.epusdt = settings.epusdt ? new EpusdtClient(settings.epusdt.url, settings.epusdt.token) : null;
  }

  /** The enabled methods and their public parameters (never a key, a URL or a merchant string). */
  info() {
    const { qris, epusdt, expiryS } = this.settings;
    const methods: Record<string, unknown>[] = [];
    if (qris) {
      methods.push({
        id: 'qris', currency: 'IDR', min: qris.minIdr.toString(), max: qris.maxIdr.toString(),
        rate: formatDecimal(qris.idrPerUsd), fee_pct: formatDecimal(qris.feePct), expiry_s: expiryS,
      });
    }
    if (epusdt) {
      methods.push({
        id: 'epusdt', currency: 'USD', min: formatDecimal({ units: epusdt.minCents, scale: 2 }), max: formatDecimal({ units: epusdt.maxCents, scale: 2 }),
        rate: epusdt.fiatUsd ? '1' : formatDecimal(epusdt.usdtPerUsd), fee_pct: '0', expiry_s: expiryS,
        pay_currency: epusdt.fiatUsd ? 'USD' : 'USDT', tokens: epusdt.tradeTypes,
      });
    }
    return { methods };
  }

  async createQris(userId: string, amountIdr: bigint): Promise<QrisInvoice> {
    const q = this.settings.qris;
    if (!q) throw new DepositError(404, 'method_disabled', 'QRIS deposits are not enabled on this gateway.');
    if (amountIdr < q.minIdr || amountIdr > q.maxIdr) {
      throw new DepositError(400, 'amount_out_of_range', `"amount_idr" must be from ${q.minIdr} to ${q.maxIdr} rupiah.`, undefined, {
        param: 'amount_idr', reason: amountIdr < q.minIdr ? 'too_small' : 'too_large', params: { min: String(q.minIdr), max: String(q.maxIdr) },
      });
    }
    const rate = { rate_idr_per_usd: formatDecimal(q.idrPerUsd), fee_pct: formatDecimal(q.feePct), requested_idr: amountIdr.toString() };
    const provider: Provider = q.mode === 'midtrans' ? 'midtrans' : 'qris';
    let d = await openDeposit(this.sql, {
      userId, method: 'qris', provider, maxOpen: this.settings.maxOpen, expiresInS: this.settings.expiryS,
      terms: async (tx) => {
        if (!q.merchant) return { amount: amountIdr.toString(), currency: 'IDR', creditNano: idrCreditNano(amountIdr, q.idrPerUsd, q.feePct), details: rate };
        const amount = await uniqueAmount(tx, amountIdr);
        const qr = merchantQr(q.merchant.staticPayload, amount);
        return { amount: amount.toString(), currency: 'IDR', creditNano: idrCreditNano(amount, q.idrPerUsd, q.feePct), details: { ...rate, qr_string: qr } };
      },
    });
    if (this.midtrans) {
      d = await this.withProvider(d, async () => {
        const c = await this.midtrans!.charge({ orderId: d.id, grossAmount: amountIdr, expiryS: this.settings.expiryS, notifyUrl: notifyUrl(this.settings.publicUrl, 'midtrans') });
        return { reference: c.transactionId, details: { qr_string: c.qrString } };
      });
    }
    const qr = String(d.details.qr_string);
    return {
      id: d.id, status: 'pending', amount_idr: Number(d.amount), credit_usd: nanoToUsd(d.credit_nano),
      qr_string: qr, qr_png: await qrPngDataUrl(qr), expires_at: d.expires_at!.toISOString(),
    };
  }

  async createEpusdt(userId: string, cents: bigint, token: string | undefined): Promise<EpusdtInvoice> {
    const e = this.settings.epusdt;
    if (!e) throw new DepositError(404, 'method_disabled', 'USDT/USDC deposits are not enabled on this gateway.');
    if (cents < e.minCents || cents > e.maxCents) {
      const [min, max] = [formatDecimal({ units: e.minCents, scale: 2 }), formatDecimal({ units: e.maxCents, scale: 2 })];
      throw new DepositError(400, 'amount_out_of_range', `"amount_usd" must be from ${min} to ${max}.`, undefined, {
        param: 'amount_usd', reason: cents < e.minCents ? 'too_small' : 'too_large', params: { min, max },
      });
    }
    if (token !== undefined && !e.tradeTypes.includes(token)) {
      throw new DepositError(400, 'invalid_token', e.tradeTypes.length ? `"token" must be one of ${e.tradeTypes.join(', ')}.` : 'This gateway offers no choice of "token"; leave it out.', undefined, {
        param: 'token', reason: 'not_allowed', params: { allowed: [...e.tradeTypes] },
      });
    }
    const tradeType = token ?? e.tradeTypes[0] ?? null;
    const pay = formatDecimal(e.fiatUsd ? { units: cents, scale: 2 } : usdToPayCents(cents, e.usdtPerUsd));
    const currency = e.fiatUsd ? 'USD' : (tradeType?.split('.')[0].toUpperCase() ?? 'USDT');
    let d = await openDeposit(this.sql, {
      userId, method: 'epusdt', provider: 'epusdt', maxOpen: this.settings.maxOpen, expiresInS: this.settings.expiryS,
      terms: async () => ({
        amount: pay, currency, creditNano: centsToNano(cents),
        details: { usd: formatDecimal({ units: cents, scale: 2 }), rate: e.fiatUsd ? null : formatDecimal(e.usdtPerUsd), trade_type: tradeType },
      }),
    });
    d = await this.withProvider(d, async () => {
      const o = await this.epusdt!.create({
        orderId: d.id.replaceAll('-', ''), amount: pay, notifyUrl: notifyUrl(this.settings.publicUrl, 'epusdt'),
        redirectUrl: this.settings.publicUrl, tradeType, fiat: e.fiatUsd ? 'USD' : null,
      });
      return { reference: o.tradeId, details: { payment_url: o.paymentUrl, wallet: o.wallet, actual_amount: o.actualAmount }, expiresAt: o.expiresAt };
    });
    return { id: d.id, status: 'pending', amount_usd: nanoToUsd(d.credit_nano), payment_url: String(d.details.payment_url), expires_at: d.expires_at!.toISOString() };
  }

  /**
   * Opens the order at the provider for a pending deposit and records its answer. A deposit
   * the provider did not take is marked failed: nobody can pay it.
   */
  private async withProvider(
    d: DepositRow,
    open: () => Promise<{ reference: string; details: Record<string, unknown>; expiresAt?: Date }>,
  ): Promise<DepositRow> {
    try {
      const r = await open();
      const row = await attachProviderOrder(this.sql, d.id, r.reference, r.details, r.expiresAt);
      return row ?? d;
    } catch (err) {
      const reason = err instanceof ProviderError ? err.message : `recording the provider's answer failed: ${(err as Error).message}`;
      await markEnded(this.sql, d.id, 'failed', reason).catch(() => {});
      this.log.warn({ deposit_id: d.id, provider: d.provider, reason }, 'deposit: the provider did not open the invoice');
      throw unavailable();
    }
  }

  /** One of the user's deposits with what is needed to pay it while pending; undefined if not theirs. */
  async view(userId: string, id: string) {
    await sweepExpired(this.sql, userId);
    const d = await findDeposit(this.sql, id);
    if (!d || d.user_id !== userId) return undefined;
    const pending = d.status === 'pending';
    const qr = pending && typeof d.details.qr_string === 'string' ? d.details.qr_string : null;
    return {
      id: d.id, method: d.method, status: d.status, amount: d.amount, currency: d.currency, credit_usd: nanoToUsd(d.credit_nano),
      created_at: d.created_at.toISOString(), paid_at: d.paid_at?.toISOString() ?? null, expires_at: d.expires_at?.toISOString() ?? null,
      qr_string: qr, qr_png: qr ? await qrPngDataUrl(qr) : null,
      payment_url: pending && typeof d.details.payment_url === 'string' ? d.details.payment_url : null,
    };
  }

  /** Whether {provider}'s notification endpoint is live under this configuration. */
  accepts(provider: Provider): boolean {
    const q = this.settings.qris;
    if (provider === 'midtrans') return !!this.midtrans;
    if (provider === 'qris') return !!q?.merchant?.notifySecret;
    return !!this.epusdt;
  }

  async notify(provider: Provider, raw: Buffer, headers: Record<string, string>): Promise<NotifyResult> {
    const ctx: NotifyContext = { sql: this.sql, hot: this.hot, log: this.log };
    if (provider === 'midtrans' && this.midtrans) return midtransNotification(ctx, this.midtrans, this.settings.qris!.midtrans!.serverKey, raw);
    if (provider === 'epusdt' && this.settings.epusdt) return epusdtNotification(ctx, this.settings.epusdt.token, raw);
    const secret = this.settings.qris?.merchant?.notifySecret;
    if (provider === 'qris' && secret) return qrisNotification(ctx, secret, raw, headers['x-signature']);
    return refuse(404, `${provider} notifications are not enabled on this gateway`);
  }

}
