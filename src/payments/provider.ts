// What a payment provider is to the gateway. Each provider lives in its own folder
// (src/payments/<id>/) whose index.ts exports one PaymentProvider, and is listed once in
// src/payments/providers.ts; everything else (the deposit routes, the notification routes,
// the environment variables and their documentation, GET /deposit/info) is read from that list.
// test/payments/registry.test.ts holds every registered provider to this contract.
//
// A deposit *method* is what a user picks (POST /api/dashboard/deposits/{method}); a *provider*
// is who confirms the payment (POST /api/payments/{provider}/notify, deposits.provider). Several
// providers may serve one method (QRIS through Midtrans or on the merchant's own code): they
// share the method's settings, body and public info, and at most one of them is enabled at a
// time (for QRIS, QRIS_MODE picks it); a method's deposits go to its enabled provider.

import type * as v from 'valibot';
import type { EnvVar } from '../env-schemas.js';
import type { Tx } from '../store/sql.js';
import type { DepositRow, Terms } from './deposits.js';
import type { NotifyContext, NotifyResult } from './notify.js';

/** A payment value present but wrong: start-up stops with its message. */
export class PaymentConfigError extends Error {}

export function notifyUrl(publicUrl: string, provider: string): string {
  return `${publicUrl}/api/payments/${provider}/notify`;
}

/** The validated payment variables, by name (src/config.ts parsed them with the providers' own schemas). */
export type EnvValues = Readonly<Record<string, unknown>>;

/** A method's settings: on, off with the reason (a warning at start), or not asked for at all (null). */
export type Configured<S> = { on: S } | { off: string } | null;

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

/**
 * A provider's light half, its folder's settings.ts: what src/config.ts reads at start (the
 * variables and the settings they make), without the provider's clients, bodies and invoices,
 * so that the command line and the cluster primary load none of those.
 */
export interface ProviderConfig<M extends string = string, S = unknown> {
  /** {provider} of /api/payments/{provider}/notify; stored in deposits.provider. */
  readonly id: string;
  /** {method} of POST /api/dashboard/deposits/{method}; stored in deposits.method. */
  readonly method: M;
  /** The method in words: "<name> deposits are not enabled on this gateway." */
  readonly methodName: string;
  /** The variables it reads, in the order docs/api.md lists them; a method's shared ones come from one object. */
  readonly env: Readonly<Record<string, EnvVar>>;
  /** The method's settings from the variables; throws PaymentConfigError on a value that is wrong. Shared by a method's providers. */
  settings(env: EnvValues): Configured<S>;
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
  start(settings: S): LiveProvider<B>;
  /** How its notifications are answered: JSON, or plain text (epusdt expects the body `ok`). */
  readonly notifyAnswer: 'json' | 'text';
}

/** The names among `pairs` whose value is unset or empty. */
export const missingVars = (pairs: [string, unknown][]): string[] =>
  pairs.filter(([, v]) => v === undefined || v === '').map(([k]) => k);

export function configFail(message: string): never {
  throw new PaymentConfigError(message);
}
