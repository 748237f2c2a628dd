// Midtrans Core API: the QRIS charge and the transaction status. Midtrans states its result in
// the body's status_code (a string), whatever the HTTP status, so both are checked.

import * as v from 'valibot';
import { sameAmount } from '../amounts.js';
import { callJson, ProviderError } from '../http.js';
import { midtransSignatureValid } from './signature.js';

const Reply = v.object({
  status_code: v.string(),
  status_message: v.optional(v.string()),
});

const Charge = v.object({
  status_code: v.literal('201'),
  transaction_id: v.pipe(v.string(), v.nonEmpty(), v.maxLength(128)),
  order_id: v.string(),
  gross_amount: v.string(),
  transaction_status: v.literal('pending'),
  qr_string: v.pipe(v.string(), v.nonEmpty(), v.maxLength(1024)),
});

const Status = v.object({
  status_code: v.string(),
  transaction_id: v.optional(v.string()),
  order_id: v.string(),
  gross_amount: v.string(),
  transaction_status: v.string(),
  fraud_status: v.optional(v.string()),
  currency: v.optional(v.string()),
  signature_key: v.optional(v.string()),
});
export type MidtransStatus = v.InferOutput<typeof Status>;

export interface MidtransCharge {
  transactionId: string;
  qrString: string;
}

export class MidtransClient {
  private readonly auth: string;

  constructor(
    private readonly baseUrl: string,
    private readonly serverKey: string,
  ) {
    this.auth = `Basic ${Buffer.from(`${serverKey}:`).toString('base64')}`;
  }

  /** POST /v2/charge for a QRIS payment; the notification address travels with it. */
  async charge(o: {
    orderId: string;
    grossAmount: bigint;
    expiryS: number;
    notifyUrl: string;
  }): Promise<MidtransCharge> {
    const { status, json } = await callJson('midtrans', `${this.baseUrl}/v2/charge`, {
      method: 'POST',
      headers: { authorization: this.auth, 'x-override-notification': o.notifyUrl },
      body: JSON.stringify({
        payment_type: 'qris',
        transaction_details: { order_id: o.orderId, gross_amount: Number(o.grossAmount) },
        qris: { acquirer: 'gopay' },
        custom_expiry: { expiry_duration: o.expiryS, unit: 'second' },
      }),
    });
    const r = v.safeParse(Charge, json);
    if (!r.success) throw new ProviderError(`midtrans charge refused: ${describe(status, json)}`);
    if (r.output.order_id !== o.orderId || !sameAmount(r.output.gross_amount, o.grossAmount.toString())) {
      throw new ProviderError(
        `midtrans charge answered for order ${r.output.order_id} of ${r.output.gross_amount}, not ${o.orderId} of ${o.grossAmount}`,
      );
    }
    return { transactionId: r.output.transaction_id, qrString: r.output.qr_string };
  }

  /** GET /v2/{order_id}/status: what Midtrans itself says about the order now. */
  async status(orderId: string): Promise<MidtransStatus> {
    const { status, json } = await callJson('midtrans', `${this.baseUrl}/v2/${encodeURIComponent(orderId)}/status`, {
      method: 'GET',
      headers: { authorization: this.auth },
    });
    const r = v.safeParse(Status, json);
    if (!r.success || r.output.order_id !== orderId)
      throw new ProviderError(`midtrans status of ${orderId}: ${describe(status, json)}`);
    if (
      r.output.signature_key !== undefined &&
      !midtransSignatureValid({ ...r.output, signature_key: r.output.signature_key }, this.serverKey)
    ) {
      throw new ProviderError(`midtrans status of ${orderId}: the answer's signature_key does not verify`);
    }
    return r.output;
  }
}

function describe(httpStatus: number, json: unknown): string {
  const r = v.safeParse(Reply, json);
  return r.success
    ? `HTTP ${httpStatus}, status_code ${r.output.status_code}${r.output.status_message ? ` (${r.output.status_message.slice(0, 200)})` : ''}`
    : `HTTP ${httpStatus}, unexpected reply`;
}
