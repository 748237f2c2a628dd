// What a payment provider is to the gateway. Each provider lives in its own folder
// (src/payments/<id>/): its settings.ts exports its light half (a ProviderConfig,
// provider-config.ts), listed once in src/payments/configs.ts, and its index.ts the whole
// PaymentProvider under its id, which providers.ts loads from that list; everything else (the
// deposit routes, the notification routes, the environment variables and their documentation,
// GET /deposit/info) is read from those. test/payments/registry.test.ts holds every registered
// provider to this contract.
//
// A deposit *method* is what a user picks (POST /api/dashboard/deposits/{method}); a *provider*
// is who confirms the payment (POST /api/payments/{provider}/notify, deposits.provider). Several
// providers may serve one method (QRIS through Midtrans or on the merchant's own code): they
// share the method's settings, body and public info, and at most one of them is enabled at a
// time (for QRIS, QRIS_MODE picks it); a method's deposits go to its enabled provider.

import type * as v from 'valibot';
import type { Tx } from '../store/sql.js';
import type { DepositRow, Terms } from './deposits.js';
import type { NotifyContext, NotifyResult } from './notify.js';
import type { ProviderConfig } from './provider-config.js';

export function notifyUrl(publicUrl: string, provider: string): string {
  return `${publicUrl}/api/payments/${provider}/notify`;
}

/** What the provider's order at its end is recorded as. */
export interface ProviderOrder {
  reference: string;
  details: Record<string, unknown>;
  expiresAt?: Date;
}

/** The shared deposit machinery an invoice is opened with. */
export interface OpenContext {
  publicUrl: string;
  expiryS: number;
  /** Where the provider is to send its notifications. */
  notifyUrl: string;
  /** A new pending deposit of this provider; the user's limit of open deposits and the expiry applied. */
  open(o: { userId: string; terms: (tx: Tx) => Promise<Terms> }): Promise<DepositRow>;
  /**
   * Opens the order at the provider and records its answer. A deposit the provider did not take
   * is marked failed (nobody can pay it) and the user gets 502.
   */
  attach(d: DepositRow, call: () => Promise<ProviderOrder>): Promise<DepositRow>;
}

/** A provider under one configuration (its clients built once). */
export interface LiveProvider<B> {
  /** Opens an invoice for the validated body; the answer is the 201 body. Refusals are DepositErrors. */
  open(ctx: OpenContext, userId: string, body: B): Promise<object>;
  /** Checks a notification's signature and moves the deposit; null while this configuration leaves its endpoint off (404). */
  notify: ((ctx: NotifyContext, raw: Buffer, headers: Record<string, string>) => Promise<NotifyResult>) | null;
}

/** How the dashboard's OpenAPI describes POST /api/dashboard/deposits/{method}: shared by a method's providers. */
export interface MethodDoc {
  summary: string;
  description: string;
  /** The 201 answer: its schema (the method folder's shape.ts), and what it is. */
  answer: v.GenericSchema;
  answered: string;
}

// Methods, not function properties: a provider of its own settings and body types stands in the
// registry's list of providers of unknown ones.
export interface PaymentProvider<M extends string = string, S = unknown, B = unknown> extends ProviderConfig<M, S> {
  /** Whether this provider is the one serving its method under these settings. */
  enabled(settings: S): boolean;
  /** Its entry in GET /api/dashboard/deposit/info: public parameters only, never a key, a URL or a merchant string. */
  info(settings: S, expiryS: number): Record<string, unknown>;
  /** The body of POST /api/dashboard/deposits/{method}. */
  readonly body: v.GenericSchema<unknown, B>;
  /** That endpoint's words and answer in the dashboard's OpenAPI document. */
  readonly doc: MethodDoc;
  start(settings: S): LiveProvider<B>;
  /** How its notifications are answered: JSON, or plain text (epusdt expects the body `ok`). */
  readonly notifyAnswer: 'json' | 'text';
}
