// The registry: the payment providers, one line each, their folders' light halves (settings.ts),
// in the order their variables are documented and their methods listed in GET /deposit/info.
// src/config.ts reads it to validate and document the providers' variables without loading
// their clients; providers.ts loads the whole providers from the folders it names, and the
// dashboard's shapes take their methods from it. Adding one: docs/architecture.md, "Adding a
// payment provider".

import { epusdtConfig } from './epusdt/settings.js';
import { midtransConfig } from './midtrans/settings.js';
import { qrisConfig } from './qris/settings.js';

export const PROVIDER_CONFIGS = [midtransConfig, qrisConfig, epusdtConfig] as const;

export type DepositMethodId = (typeof PROVIDER_CONFIGS)[number]['method'];

/** The registered methods, each once, in registry order: the {method} of each deposit route. */
export const DEPOSIT_METHODS: readonly DepositMethodId[] = [...new Set(PROVIDER_CONFIGS.map((p) => p.method))];
