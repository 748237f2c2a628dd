// Midtrans' light half (src/payments/provider-config.ts, ProviderConfig): its variables beside QRIS's.

import { secret, url } from '../../env-schemas.js';
import type { ProviderConfig } from '../provider-config.js';
import { QRIS_METHOD_ENV, qrisSettings, type QrisSettings } from '../qris/settings.js';

export const midtransConfig: ProviderConfig<'qris', QrisSettings> = {
  id: 'midtrans',
  method: 'qris',
  methodName: 'QRIS',
  env: {
    ...QRIS_METHOD_ENV,
    MIDTRANS_URL: {
      schema: url('MIDTRANS_URL', ['http:', 'https:']),
      doc: 'Midtrans API base (default https://api.midtrans.com; sandbox: https://api.sandbox.midtrans.com).',
    },
    MIDTRANS_SERVER_KEY: {
      schema: secret('MIDTRANS_SERVER_KEY', 8),
      doc: 'Midtrans server key: authenticates charges and verifies notification signatures (required for QRIS_MODE=midtrans).',
      secret: true,
    },
  },
  settings: qrisSettings,
};
