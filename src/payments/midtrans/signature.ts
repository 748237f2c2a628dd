// Midtrans signs a notification (and a status answer) with SHA-512 over
// order_id + status_code + gross_amount + server key, the amount exactly as sent ("100000.00").

import { createHash } from 'node:crypto';
import { sameHex } from '../signature.js';

export const midtransSignature = (
  orderId: string,
  statusCode: string,
  grossAmount: string,
  serverKey: string,
): string =>
  createHash('sha512')
    .update(orderId + statusCode + grossAmount + serverKey)
    .digest('hex');

export const midtransSignatureValid = (
  body: { order_id: string; status_code: string; gross_amount: string; signature_key: unknown },
  serverKey: string,
): boolean =>
  sameHex(midtransSignature(body.order_id, body.status_code, body.gross_amount, serverKey), body.signature_key);
