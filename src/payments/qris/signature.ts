// Own-merchant QRIS notifications (from whatever watches the merchant account) are signed with
// hex HMAC-SHA256 of the raw body under QRIS_NOTIFY_SECRET, sent in `x-signature`.

import { createHmac } from 'node:crypto';
import { sameHex } from '../signature.js';

export const qrisSignature = (rawBody: Buffer | string, secret: string): string =>
  createHmac('sha256', secret).update(rawBody).digest('hex');

export const qrisSignatureValid = (rawBody: Buffer, secret: string, given: unknown): boolean =>
  sameHex(qrisSignature(rawBody, secret), given);
