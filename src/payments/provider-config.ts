// A payment provider's light half (its folder's settings.ts): what src/config.ts reads at start
// (the variables and the settings they make), without the provider's clients, bodies and
// invoices, so that the command line and the cluster primary load none of those. The registry
// (configs.ts) lists these halves, and the dashboard's shapes read their methods from it, so
// nothing here or in a settings.ts imports Node: the web app's type check reads them too.

import type { EnvVar } from '../env-schemas.js';

/** A payment value present but wrong: start-up stops with its message. */
export class PaymentConfigError extends Error {}

/** The validated payment variables, by name (src/config.ts parsed them with the providers' own schemas). */
export type EnvValues = Readonly<Record<string, unknown>>;

/** A method's settings: on, off with the reason (a warning at start), or not asked for at all (null). */
export type Configured<S> = { on: S } | { off: string } | null;

export interface ProviderConfig<M extends string = string, S = unknown> {
  /**
   * {provider} of /api/payments/{provider}/notify; stored in deposits.provider. Also its folder's
   * name, and the name its index.ts exports the whole provider under.
   */
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

/** The names among `pairs` whose value is unset or empty. */
export const missingVars = (pairs: [string, unknown][]): string[] =>
  pairs.filter(([, v]) => v === undefined || v === '').map(([k]) => k);

export function configFail(message: string): never {
  throw new PaymentConfigError(message);
}
