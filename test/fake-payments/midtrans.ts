// A stand-in for the Midtrans Core API over real HTTP: POST /v2/charge (QRIS) and
// GET /v2/{order_id|transaction_id}/status, basic auth with the server key, Midtrans' bodies and
// status codes, and HTTP notifications signed with SHA-512, delivered to X-Override-Notification
// (else the configured URL) and retried until a 2xx. Tests move an order on with pay(),
// expire(), cancel(), deny(), refund(); Midtrans itself notifies the pending state at once.

import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { midtransSignature } from '../../src/payments/midtrans/signature.js';
import { toDynamic } from '../../src/payments/qris/emv.js';
import { deliver, DEFAULT_RETRY_DELAYS_MS, type Delivery } from './deliver.js';
import { listen, sendJson, type Received } from './http.js';

/** The static QRIS example of a small merchant; the fake's codes are made dynamic from it. */
export const MIDTRANS_MERCHANT_QRIS =
  '00020101021126570011ID.DANA.WWW011893600915302259148102090225914810303UMI51440014ID.CO.QRIS.WWW0215ID10200176114730303UMI5204581253033605802ID5922Warung Sayur Bu Sugeng6010Kab. Demak610559567630458C7';

export type MidtransState = 'pending' | 'settlement' | 'expire' | 'cancel' | 'deny' | 'refund';

const STATUS_CODE: Record<MidtransState, string> = {
  pending: '201',
  settlement: '200',
  expire: '407',
  cancel: '200',
  deny: '202',
  refund: '200',
};

export interface MidtransTransaction {
  order_id: string;
  transaction_id: string;
  gross_amount: string;
  state: MidtransState;
  qr_string: string;
  notifyUrls: string[];
  transaction_time: string;
  settlement_time?: string;
  expiry_time: string;
}

export interface FakeMidtrans {
  url: string;
  requests: Received[];
  transactions: Map<string, MidtransTransaction>;
  deliveries: Delivery[];
  /** Make the next calls fail: charge with HTTP 500, or status with HTTP 500. */
  down: { charge: boolean; status: boolean };
  pay(orderId: string): Promise<Delivery[]>;
  expire(orderId: string): Promise<Delivery[]>;
  cancel(orderId: string): Promise<Delivery[]>;
  deny(orderId: string): Promise<Delivery[]>;
  /** A settled order's money given back to the payer (the merchant asked Midtrans). */
  refund(orderId: string): Promise<Delivery[]>;
  /** The notification Midtrans sends for the order in `state` (default: its current one). */
  notification(orderId: string, state?: MidtransState): Record<string, string>;
  /** POST a notification body to the order's notification URLs, with retries. */
  send(orderId: string, body: Record<string, string>): Promise<Delivery[]>;
  close(): Promise<void>;
}

/** Jakarta wall-clock time, as Midtrans writes it: "2024-01-31 19:04:05". */
const jakarta = (ms: number) => new Date(ms + 7 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');

export async function startFakeMidtrans(opts: {
  serverKey: string;
  notifyUrl?: string;
  retryDelaysMs?: number[];
}): Promise<FakeMidtrans> {
  const transactions = new Map<string, MidtransTransaction>();
  const deliveries: Delivery[] = [];
  const down = { charge: false, status: false };
  const auth = `Basic ${Buffer.from(`${opts.serverKey}:`).toString('base64')}`;

  const find = (id: string) => transactions.get(id) ?? [...transactions.values()].find((t) => t.transaction_id === id);

  const statusBody = (t: MidtransTransaction, state = t.state): Record<string, string> => {
    const status_code = STATUS_CODE[state];
    return {
      transaction_time: t.transaction_time,
      transaction_status: state,
      transaction_id: t.transaction_id,
      status_message: 'Success, transaction is found',
      status_code,
      signature_key: midtransSignature(t.order_id, status_code, t.gross_amount, opts.serverKey),
      ...(state === 'settlement' && t.settlement_time ? { settlement_time: t.settlement_time } : {}),
      payment_type: 'qris',
      order_id: t.order_id,
      merchant_id: 'G000000001',
      gross_amount: t.gross_amount,
      fraud_status: 'accept',
      currency: 'IDR',
      acquirer: 'gopay',
      expiry_time: t.expiry_time,
    };
  };

  const send = async (orderId: string, body: Record<string, string>) => {
    const t = find(orderId);
    if (!t) throw new Error(`fake midtrans: no order ${orderId}`);
    const payload = JSON.stringify(body);
    const ds = t.notifyUrls.map((u) =>
      deliver(u, payload, (status) => status >= 200 && status < 300, opts.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS),
    );
    deliveries.push(...ds);
    return Promise.all(ds.map((d) => d.done));
  };

  const move = (to: MidtransState) => async (orderId: string) => {
    const t = find(orderId);
    if (!t) throw new Error(`fake midtrans: no order ${orderId}`);
    const from = to === 'refund' ? 'settlement' : 'pending';
    if (t.state !== from) throw new Error(`fake midtrans: order ${orderId} is ${t.state}, not ${from}`);
    t.state = to;
    if (to === 'settlement') t.settlement_time = jakarta(Date.now());
    return send(orderId, statusBody(t));
  };

  const unauthorized = (res: ServerResponse) =>
    sendJson(res, 401, {
      status_code: '401',
      status_message: 'Access denied due to unauthorized transaction, please check client or server key',
      id: randomUUID(),
    });

  const server = await listen((req, res) => {
    if (req.method === 'POST' && req.path === '/v2/charge') {
      if (req.headers.authorization !== auth) return unauthorized(res);
      if (down.charge)
        return sendJson(res, 500, {
          status_code: '500',
          status_message: 'Sorry. Our system is recovering from unexpected issues. Please retry.',
        });
      const b = req.body;
      const orderId = b?.transaction_details?.order_id;
      const gross = b?.transaction_details?.gross_amount;
      const problems: string[] = [];
      if (b?.payment_type !== 'qris') problems.push('payment_type must be qris');
      if (typeof orderId !== 'string' || !/^[A-Za-z0-9\-_~.]{1,50}$/.test(orderId))
        problems.push('transaction_details.order_id is invalid');
      if (!Number.isSafeInteger(gross) || gross < 1)
        problems.push('transaction_details.gross_amount must be a whole number of rupiah');
      if (problems.length)
        return sendJson(res, 400, {
          status_code: '400',
          status_message: 'One or more parameters in the payload is invalid.',
          validation_messages: problems,
          id: randomUUID(),
        });
      if (transactions.has(orderId)) {
        return sendJson(res, 406, {
          status_code: '406',
          status_message:
            'The request could not be completed due to a conflict with the current state of the target resource, please try again',
          id: randomUUID(),
        });
      }
      const now = Date.now();
      const expirySeconds = b?.custom_expiry?.unit === 'second' ? Number(b.custom_expiry.expiry_duration) : 15 * 60;
      const override =
        typeof req.headers['x-override-notification'] === 'string' ? req.headers['x-override-notification'] : '';
      const t: MidtransTransaction = {
        order_id: orderId,
        transaction_id: randomUUID(),
        gross_amount: `${gross}.00`,
        state: 'pending',
        qr_string: toDynamic(MIDTRANS_MERCHANT_QRIS, BigInt(gross)),
        notifyUrls: override
          ? override
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
          : opts.notifyUrl
            ? [opts.notifyUrl]
            : [],
        transaction_time: jakarta(now),
        expiry_time: jakarta(now + expirySeconds * 1000),
      };
      transactions.set(orderId, t);
      sendJson(res, 200, {
        status_code: '201',
        status_message: 'QRIS transaction is created',
        transaction_id: t.transaction_id,
        order_id: t.order_id,
        merchant_id: 'G000000001',
        gross_amount: t.gross_amount,
        currency: 'IDR',
        payment_type: 'qris',
        transaction_time: t.transaction_time,
        transaction_status: 'pending',
        fraud_status: 'accept',
        actions: [
          { name: 'generate-qr-code', method: 'GET', url: `${server.url}/v2/qris/${t.transaction_id}/qr-code` },
        ],
        qr_string: t.qr_string,
        acquirer: 'gopay',
        expiry_time: t.expiry_time,
      });
      // As Midtrans does, the pending state is notified too.
      void send(orderId, statusBody(t));
      return;
    }
    const m = /^\/v2\/([^/]+)\/status$/.exec(req.path);
    if (req.method === 'GET' && m) {
      if (req.headers.authorization !== auth) return unauthorized(res);
      if (down.status)
        return sendJson(res, 500, {
          status_code: '500',
          status_message: 'Sorry. Our system is recovering from unexpected issues. Please retry.',
        });
      const t = find(decodeURIComponent(m[1]));
      if (!t)
        return sendJson(res, 404, {
          status_code: '404',
          status_message: "Transaction doesn't exist.",
          id: randomUUID(),
        });
      return sendJson(res, 200, statusBody(t));
    }
    sendJson(res, 404, { status_code: '404', status_message: 'The requested resource is not found' });
  });

  return {
    url: server.url,
    requests: server.requests,
    transactions,
    deliveries,
    down,
    pay: move('settlement'),
    expire: move('expire'),
    cancel: move('cancel'),
    deny: move('deny'),
    refund: move('refund'),
    notification(orderId, state) {
      const t = find(orderId);
      if (!t) throw new Error(`fake midtrans: no order ${orderId}`);
      return statusBody(t, state);
    },
    send,
    close: server.close,
  };
}
