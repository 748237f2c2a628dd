// The payment providers' light halves (each folder's settings.ts), one line each, in the order of
// providers.ts: what src/config.ts reads to validate and document the providers' variables
// without loading their clients. providers.ts holds the whole providers; the type below and
// test/payments/registry.test.ts keep the two lists the same.

import { epusdtConfig } from './epusdt/settings.js';
import { midtransConfig } from './midtrans/settings.js';
import { qrisConfig } from './qris/settings.js';

export const PROVIDER_CONFIGS = [midtransConfig, qrisConfig, epusdtConfig] as const;
