// The whole payment providers, loaded from the folders that the registry (configs.ts) names, in
// its order: a provider needs no line here.

import type { PaymentProvider } from './provider.js';
import type { ProviderConfig } from './provider-config.js';
import { PROVIDER_CONFIGS } from './configs.js';

/**
 * A provider's folder, found by its id: configs.ts (which the command line, the cluster primary
 * and the web app's type check read) then names no client. esbuild bundles every
 * `<folder>/index.ts` for this import, which is why it names the .ts.
 */
async function load(config: ProviderConfig): Promise<PaymentProvider> {
  const folder = (await import(`./${config.id}/index.ts`)) as Partial<Record<string, PaymentProvider>>;
  const provider = folder[config.id];
  if (provider?.id !== config.id)
    throw new Error(`src/payments/${config.id}/index.ts exports no provider named ${config.id}`);
  return provider;
}

/**
 * Loaded when this module is first imported (the server's payment routes and service), and read
 * synchronously after that. No provider's folder may import this module: its import would wait
 * for the loading that waits for it.
 */
export const PROVIDERS: readonly PaymentProvider[] = await Promise.all(PROVIDER_CONFIGS.map(load));
