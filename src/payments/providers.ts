// The payment providers, one line each, in the order their variables are documented and their
// methods listed in GET /deposit/info; configs.ts lists their light halves in the same order.
// Adding one: docs/architecture.md, "Adding a payment provider".

import { epusdt } from './epusdt/index.js';
import { midtrans } from './midtrans/index.js';
import { qris } from './qris/index.js';

export const PROVIDERS = [midtrans, qris, epusdt] as const;
