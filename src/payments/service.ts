// Deposits as the dashboard and the notification routes see them: what is on offer, opening an
// invoice with a method's provider, reading one back, and handing notifications to their
// provider. Which provider does what is the registry's (src/payments/configs.ts); what every
// provider shares (the deposit state machine, the open-deposit limit, the expiry, failing a
// deposit its provider did not take) is here and in deposits.ts.

import type { Logger } from 'pino';
import { nanoToUsd } from '../billing/money.js';
import type { HotStore } from '../store/hot.js';
import type { Sql } from '../store/sql.js';
import {
  attachProviderOrder,
  DepositError,
  findDeposit,
  markEnded,
  openDeposit,
  sweepExpired,
  type DepositRow,
} from './deposits.js';
import { ProviderError } from './http.js';
import { refuse, type NotifyContext, type NotifyResult } from './notify.js';
import {
  notifyUrl,
  type LiveProvider,
  type OpenContext,
  type PaymentProvider,
  type ProviderOrder,
} from './provider.js';
import { PROVIDERS } from './providers.js';
import { qrPngDataUrl } from './qr-image.js';
import type { PaymentSettings } from './settings.js';

/** The request body a method's invoices are opened with (its providers share it); undefined for no registered method. */
export const methodBody = (method: string) => PROVIDERS.find((p) => p.method === method)?.body;

const unavailable = () =>
  new DepositError(502, 'provider_error', 'The payment provider could not open the invoice; try again shortly.');

interface Live {
  provider: PaymentProvider;
  settings: unknown;
  live: LiveProvider<unknown>;
}

export class Payments {
  /** Enabled providers by id. */
  private readonly byId = new Map<string, Live>();
  /** The enabled provider of each method, in registry order. */
  private readonly byMethod = new Map<string, Live>();

  constructor(
    private readonly sql: Sql,
    private readonly hot: HotStore,
    private readonly log: Logger,
    readonly settings: PaymentSettings,
  ) {
    for (const provider of PROVIDERS) {
      const s = (settings as unknown as Record<string, unknown>)[provider.method];
      if (s === null || s === undefined || !provider.enabled(s)) continue;
      const entry = { provider, settings: s, live: provider.start(s) };
      this.byId.set(provider.id, entry);
      if (!this.byMethod.has(provider.method)) this.byMethod.set(provider.method, entry);
    }
  }

  /** The enabled methods and their public parameters (never a key, a URL or a merchant string). */
  info() {
    return { methods: [...this.byMethod.values()].map((e) => e.provider.info(e.settings, this.settings.expiryS)) };
  }

  /** Opens an invoice of `method` for a body its schema (methodBody) validated; the answer is the 201 body. */
  async open(method: string, userId: string, body: unknown): Promise<object> {
    const e = this.byMethod.get(method);
    if (!e) {
      const name = PROVIDERS.find((p) => p.method === method)?.methodName ?? method;
      throw new DepositError(404, 'method_disabled', `${name} deposits are not enabled on this gateway.`);
    }
    const { id } = e.provider;
    const { publicUrl, expiryS, maxOpen } = this.settings;
    const ctx: OpenContext = {
      publicUrl,
      expiryS,
      notifyUrl: notifyUrl(publicUrl, id),
      open: (o) =>
        openDeposit(this.sql, { userId: o.userId, method, provider: id, maxOpen, expiresInS: expiryS, terms: o.terms }),
      attach: (d, call) => this.withProvider(d, call),
    };
    return e.live.open(ctx, userId, body);
  }

  /**
   * Opens the order at the provider for a pending deposit and records its answer. A deposit
   * the provider did not take is marked failed: nobody can pay it.
   */
  private async withProvider(d: DepositRow, open: () => Promise<ProviderOrder>): Promise<DepositRow> {
    try {
      const r = await open();
      const row = await attachProviderOrder(this.sql, d.id, r.reference, r.details, r.expiresAt);
      return row ?? d;
    } catch (err) {
      const reason =
        err instanceof ProviderError
          ? err.message
          : `recording the provider's answer failed: ${(err as Error).message}`;
      await markEnded(this.sql, d.id, 'failed', reason).catch(() => {});
      this.log.warn(
        { deposit_id: d.id, provider: d.provider, reason },
        'deposit: the provider did not open the invoice',
      );
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
      id: d.id,
      method: d.method,
      status: d.status,
      amount: d.amount,
      currency: d.currency,
      credit_usd: nanoToUsd(d.credit_nano),
      created_at: d.created_at.toISOString(),
      paid_at: d.paid_at?.toISOString() ?? null,
      expires_at: d.expires_at?.toISOString() ?? null,
      qr_string: qr,
      qr_png: qr ? await qrPngDataUrl(qr) : null,
      payment_url: pending && typeof d.details.payment_url === 'string' ? d.details.payment_url : null,
    };
  }

  /** Whether {provider}'s notification endpoint is live under this configuration. */
  accepts(provider: string): boolean {
    return !!this.byId.get(provider)?.live.notify;
  }

  async notify(provider: string, raw: Buffer, headers: Record<string, string>): Promise<NotifyResult> {
    const handle = this.byId.get(provider)?.live.notify;
    if (!handle) return refuse(404, `${provider} notifications are not enabled on this gateway`);
    const ctx: NotifyContext = { sql: this.sql, hot: this.hot, log: this.log };
    return handle(ctx, raw, headers);
  }
}
