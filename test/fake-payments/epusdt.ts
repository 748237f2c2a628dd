// A stand-in for an epusdt server over real HTTP: POST /api/v1/order/create-transaction with
// the MD5 signature checked, HTTP 200 always with {status_code, message, data, request_id}
// (401 bad signature, 10002 duplicate order, 10003 no wallet, 10004 bad amount, 10009 bad
// request), amounts nudged by 0.01 to stay unique per wallet, a checkout page, and signed
// notifications (status 2 paid, 3 expired) retried until the body is exactly `ok`.

import { randomBytes, randomInt } from 'node:crypto';
import { formatDecimal, numberText } from '../../src/payments/amounts.js';
import { epusdtSignature, epusdtSignatureValid, type SignedValue } from '../../src/payments/epusdt/signature.js';
import { deliver, DEFAULT_RETRY_DELAYS_MS, type Delivery } from './deliver.js';
import { listen, sendJson, type Received } from './http.js';

export const EPUSDT_WALLET = 'TNEns8t9jbWENbStkQdVQtHMGpbsYsQjZK';

export interface EpusdtOrder {
  trade_id: string;
  order_id: string;
  /** As received (a JSON number). */
  amount: number;
  actual_amount: number;
  token: string;
  status: 1 | 2 | 3;
  notify_url: string;
  redirect_url: string;
  trade_type?: string;
  fiat?: string;
  expiration_time: number;
  block_transaction_id?: string;
}

export interface FakeEpusdt {
  url: string;
  requests: Received[];
  orders: Map<string, EpusdtOrder>;
  deliveries: Delivery[];
  /** Wallet addresses to receive on; empty makes creation fail with 10003. */
  wallets: string[];
  pay(orderId: string): Promise<Delivery>;
  expire(orderId: string): Promise<Delivery>;
  /** The signed notification for the order in `status` (default its current one). */
  notification(orderId: string, status?: 1 | 2 | 3): Record<string, string | number>;
  send(orderId: string, body: Record<string, unknown>): Promise<Delivery>;
  close(): Promise<void>;
}

export async function startFakeEpusdt(opts: {
  token: string;
  retryDelaysMs?: number[];
  expiryMinutes?: number;
}): Promise<FakeEpusdt> {
  const orders = new Map<string, EpusdtOrder>();
  const deliveries: Delivery[] = [];
  const wallets = [EPUSDT_WALLET];
  const find = (id: string) => orders.get(id) ?? [...orders.values()].find((o) => o.trade_id === id);

  const reply = (res: Parameters<typeof sendJson>[0], status_code: number, message: string, data: unknown = null) =>
    sendJson(res, 200, { status_code, message, data, request_id: randomBytes(8).toString('hex') });

  /** The smallest amount ≥ `wanted` (4 decimals) not held by an open order on the wallet. */
  const freeAmount = (wallet: string, wanted: number): number => {
    const held = new Set(
      [...orders.values()].filter((o) => o.status === 1 && o.token === wallet).map((o) => o.actual_amount),
    );
    let cents = BigInt(Math.round(wanted * 10_000));
    while (held.has(Number(cents) / 10_000)) cents += 100n; // +0.01
    return Number(formatDecimal({ units: cents, scale: 4 }));
  };

  const notification = (o: EpusdtOrder, status = o.status): Record<string, string | number> => {
    const fields: Record<string, string | number> = {
      trade_id: o.trade_id,
      order_id: o.order_id,
      amount: o.amount,
      actual_amount: o.actual_amount,
      token: o.token,
      block_transaction_id: o.block_transaction_id ?? '',
      status,
    };
    return { ...fields, signature: epusdtSignature(fields, opts.token) };
  };

  const send = async (orderId: string, body: Record<string, unknown>) => {
    const o = find(orderId);
    if (!o) throw new Error(`fake epusdt: no order ${orderId}`);
    const d = deliver(
      o.notify_url,
      JSON.stringify(body),
      (status, text) => status === 200 && text === 'ok',
      opts.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS,
    );
    deliveries.push(d);
    return d.done;
  };

  const server = await listen((req, res) => {
    if (req.method === 'POST' && req.path === '/api/v1/order/create-transaction') {
      const b = req.body;
      if (!b || typeof b !== 'object' || Array.isArray(b))
        return reply(res, 10009, 'cannot parse the request parameters');
      if (typeof b.signature !== 'string' || !epusdtSignatureValid(b as Record<string, SignedValue>, opts.token))
        return reply(res, 401, 'signature verification failed');
      if (typeof b.order_id !== 'string' || b.order_id === '' || b.order_id.length > 32)
        return reply(res, 10009, 'order_id is required, at most 32 characters');
      if (typeof b.notify_url !== 'string' || !/^https?:\/\/[^/]+/.test(b.notify_url))
        return reply(res, 10009, 'notify_url must be a full URL');
      if (typeof b.amount !== 'number' || numberText(b.amount) === null || !(b.amount > 0.01))
        return reply(res, 10004, 'the payment amount is below the smallest unit');
      if (orders.has(b.order_id)) return reply(res, 10002, 'the order already exists');
      if (wallets.length === 0) return reply(res, 10003, 'no wallet address available');
      const token = wallets[0];
      const o: EpusdtOrder = {
        trade_id: `${new Date().toISOString().slice(0, 10).replaceAll('-', '')}${Date.now()}${String(randomInt(1000)).padStart(3, '0')}`,
        order_id: b.order_id,
        amount: b.amount,
        actual_amount: freeAmount(token, b.amount),
        token,
        status: 1,
        notify_url: b.notify_url,
        redirect_url: typeof b.redirect_url === 'string' ? b.redirect_url : '',
        trade_type: typeof b.trade_type === 'string' ? b.trade_type : undefined,
        fiat: typeof b.fiat === 'string' ? b.fiat : undefined,
        expiration_time: Math.floor(Date.now() / 1000) + (opts.expiryMinutes ?? 10) * 60,
      };
      orders.set(o.order_id, o);
      return reply(res, 200, 'success', {
        trade_id: o.trade_id,
        order_id: o.order_id,
        amount: o.amount,
        actual_amount: o.actual_amount,
        token: o.token,
        expiration_time: o.expiration_time,
        payment_url: `${server.url}/pay/checkout-counter/${o.trade_id}`,
      });
    }
    const page = /^\/pay\/checkout-counter\/(\d+)$/.exec(req.path);
    if (req.method === 'GET' && page) {
      const o = find(page[1]);
      res.writeHead(o ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        o ? `<!doctype html><title>Pay</title><p>Send ${o.actual_amount} USDT to ${o.token}</p>` : 'no such order',
      );
      return;
    }
    reply(res, 404, 'not found');
  });

  const move = (to: 2 | 3) => async (orderId: string) => {
    const o = find(orderId);
    if (!o) throw new Error(`fake epusdt: no order ${orderId}`);
    if (o.status !== 1) throw new Error(`fake epusdt: order ${orderId} is in status ${o.status}`);
    o.status = to;
    if (to === 2) o.block_transaction_id = randomBytes(32).toString('hex');
    return send(orderId, notification(o));
  };

  return {
    url: server.url,
    requests: server.requests,
    orders,
    deliveries,
    wallets,
    pay: move(2),
    expire: move(3),
    notification(orderId, status) {
      const o = find(orderId);
      if (!o) throw new Error(`fake epusdt: no order ${orderId}`);
      return notification(o, status);
    },
    send,
    close: server.close,
  };
}
