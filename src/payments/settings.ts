// Which deposit methods the environment enables, with their parameters parsed exactly: each
// method's settings come from its providers' light halves (src/payments/configs.ts). A method is on only
// when its settings are complete; a method asked for but incomplete is off, with the reason
// kept for a warning at start. Values that are present but wrong stop start-up.

import type { EnvVar } from '../env-schemas.js';
import { PROVIDER_CONFIGS } from './configs.js';
import type { EnvValues, ProviderConfig } from './provider-config.js';

export { PaymentConfigError } from './provider-config.js';

type Registered = (typeof PROVIDER_CONFIGS)[number];
type SettingsOf<P> = P extends ProviderConfig<string, infer S> ? S : never;

/** Each registered method's settings (null: off), under the method's id. */
export type MethodSettings = { [P in Registered as P['method']]: SettingsOf<P> | null };

export type PaymentSettings = MethodSettings & {
  publicUrl: string;
  expiryS: number;
  maxOpen: number;
  /** Methods asked for but left off, and why. */
  disabled: string[];
};

/** Every provider's variables, in registry order; a method's shared variables once. */
export const PAYMENT_ENV: Readonly<Record<string, EnvVar>> = Object.assign({}, ...PROVIDER_CONFIGS.map((p) => p.env));

/**
 * The payment settings from the variables as src/config.ts has validated them (the deposit
 * limits shared by every method, and each provider's own).
 */
export function paymentSettings(
  e: EnvValues & { DEPOSIT_EXPIRY_S: number; DEPOSIT_MAX_OPEN: number },
  publicUrl: string,
): PaymentSettings {
  const disabled: string[] = [];
  const methods: Record<string, unknown> = {};
  for (const p of PROVIDER_CONFIGS) {
    // The providers of one method share its settings: read once.
    if (Object.hasOwn(methods, p.method)) continue;
    const c = p.settings(e);
    methods[p.method] = c && 'on' in c ? c.on : null;
    if (c && 'off' in c) disabled.push(c.off);
  }
  return {
    ...(methods as MethodSettings),
    publicUrl,
    expiryS: e.DEPOSIT_EXPIRY_S,
    maxOpen: e.DEPOSIT_MAX_OPEN,
    disabled,
  };
}
