// epusdt (and its forks): create-transaction with the MD5 signature. The server answers HTTP 200
// whatever happened; its status_code says which (200 created, 401 bad signature, 10002
// duplicate order, 10003 no wallet, 10004 bad amount, 10005 no free amount slot).

import * as v from 'valibot';
import { numberText, sameAmount } from '../amounts.js';
import { callJson, ProviderError } from '../http.js';
import { epusdtSignature } from './signature.js';

const Envelope = v.object({
  status_code: v.number(),
  message: v.optional(v.nullable(v.string())),
  data: v.unknown(),
});

const Created = v.object({
  trade_id: v.pipe(v.string(), v.nonEmpty(), v.maxLength(128)),
  order_id: v.string(),
  amount: v.number(),
  actual_amount: v.number(),
  token: v.pipe(v.string(), v.maxLength(256)),
  expiration_time: v.pipe(v.number(), v.integer()),
  payment_url: v.pipe(
    v.string(),
    v.maxLength(2048),
    v.check((s) => /^https?:\/\//i.test(s), 'payment_url is not an http(s) URL'),
  ),
});

const MEANING: Record<number, string> = {
  401: 'the server refused the signature (check EPUSDT_TOKEN)',
  10002: 'the order already exists',
  10003: 'the server has no wallet available',
  10004: 'the server refused the amount',
  10005: 'the server has no free amount slot',
};

export interface EpusdtOrder {
  tradeId: string;
  /** The wallet address to pay. */
  wallet: string;
  actualAmount: string;
  paymentUrl: string;
  expiresAt: Date;
}

export class EpusdtClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async create(o: {
    orderId: string;
    amount: string;
    notifyUrl: string;
    redirectUrl: string;
    tradeType: string | null;
    fiat: 'USD' | null;
  }): Promise<EpusdtOrder> {
    // The amount goes out as a JSON number whose text is exactly the text signed.
    const amount = Number(o.amount);
    if (numberText(amount) !== o.amount)
      throw new ProviderError(`epusdt: amount ${o.amount} has no exact JSON number form`);
    const fields: Record<string, string | number> = {
      order_id: o.orderId,
      amount,
      notify_url: o.notifyUrl,
      redirect_url: o.redirectUrl,
    };
    if (o.tradeType) fields.trade_type = o.tradeType;
    if (o.fiat) fields.fiat = o.fiat;
    const body = { ...fields, signature: epusdtSignature(fields, this.token) };
    const { json } = await callJson('epusdt', `${this.baseUrl}/api/v1/order/create-transaction`, {
      method: 'POST',
      body: JSON.stringify(body),
    });
    const env = v.safeParse(Envelope, json);
    if (!env.success) throw new ProviderError('epusdt: the reply is not a {status_code, message, data} envelope');
    if (env.output.status_code !== 200) {
      const meaning = MEANING[env.output.status_code] ?? (env.output.message ?? '').slice(0, 200);
      throw new ProviderError(`epusdt refused the order: status_code ${env.output.status_code} (${meaning})`);
    }
    const data = v.safeParse(Created, env.output.data);
    if (!data.success) throw new ProviderError(`epusdt: malformed order data (${data.issues[0].message})`);
    const d = data.output;
    if (d.order_id !== o.orderId || !sameAmount(d.amount, o.amount)) {
      throw new ProviderError(
        `epusdt answered for order ${d.order_id} of ${d.amount}, not ${o.orderId} of ${o.amount}`,
      );
    }
    return {
      tradeId: d.trade_id,
      wallet: d.token,
      actualAmount: numberText(d.actual_amount) ?? '',
      paymentUrl: d.payment_url,
      expiresAt: new Date(d.expiration_time * 1000),
    };
  }
}
