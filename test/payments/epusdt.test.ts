// USDT/USDC through an epusdt server, end to end against the fake epusdt over HTTP: the signed
// order, the hosted checkout, notifications acknowledged with exactly `ok`, and every way a
// notification can be wrong.

import t from 'tap';
import { request } from 'undici';
import { epusdtSignature } from '../../src/payments/epusdt/signature.js';
import { chat, EPUSDT_TOKEN, spendingGateway, startPayments } from '../helpers/payments.js';
import { sleep } from '../helpers/http.js';
import { answerErrors } from '../helpers/openapi.js';

t.test('epusdt: create, pay, credit once, spend elsewhere', async (t) => {
  const s = await startPayments(t, {
    USDT_PER_USD: '1.0037',
    EPUSDT_MIN_USD: '2',
    EPUSDT_MAX_USD: '500',
    EPUSDT_TRADE_TYPES: 'usdt.trc20,usdc.solana',
  });
  const { api, epusdt } = s;
  const u = await s.customer();

  const info = await api('GET', '/deposit/info', { token: u.session });
  t.same(
    info.json.methods,
    [
      {
        id: 'epusdt',
        currency: 'USD',
        min: '2',
        max: '500',
        rate: '1.0037',
        fee_pct: '0',
        expiry_s: 900,
        pay_currency: 'USDT',
        tokens: ['usdt.trc20', 'usdc.solana'],
      },
    ],
    'only epusdt is configured; public parameters only',
  );
  t.notOk(info.text.includes(EPUSDT_TOKEN) || info.text.includes(epusdt.url));

  const other = await spendingGateway(t, s);
  t.equal(await chat(other.url, u.key), 402);

  const created = await api('POST', '/deposit/epusdt/create', { token: u.session, body: { amount_usd: '25.50' } });
  t.equal(created.status, 201, created.text);
  const inv = created.json;
  t.match(inv, { status: 'pending', amount_usd: '25.500000000' }, 'the invoice');
  t.same(Object.keys(inv).sort(), ['amount_usd', 'expires_at', 'id', 'payment_url', 'status']);
  const sent = epusdt.requests.find((r) => r.path === '/api/v1/order/create-transaction')!;
  // 25.50 USD at 1.0037 USDT/USD = 25.59435, rounded up to the cent.
  t.match(sent.raw, /"amount":25\.6[,}]/, 'the amount goes out as the JSON number 25.6');
  t.same(
    { ...sent.body, signature: undefined },
    {
      order_id: inv.id.replaceAll('-', ''),
      amount: 25.6,
      notify_url: `${s.gw.url}/api/payments/epusdt/notify`,
      redirect_url: s.gw.url,
      trade_type: 'usdt.trc20',
      signature: undefined,
    },
  );
  t.equal(sent.body.signature, epusdtSignature({ ...sent.body }, EPUSDT_TOKEN), 'signed as the protocol says');
  const shown = await api('GET', `/deposits/${inv.id}`, { token: u.session });
  t.match(shown.json, { status: 'pending', payment_url: inv.payment_url, qr_string: null });
  const doc = (await api('GET', '/openapi.json')).json;
  for (const [path, method, r] of [
    ['/deposit/info', 'get', info],
    ['/deposit/epusdt/create', 'post', created],
    ['/deposits/{id}', 'get', shown],
  ] as const) {
    t.same(answerErrors(doc, path, method, r), [], `${method} ${path} ${r.status} fits the OpenAPI document`);
  }
  const page = await request(inv.payment_url);
  t.equal(page.statusCode, 200, 'the checkout page is served');
  await page.body.text();
  const order = epusdt.orders.get(inv.id.replaceAll('-', ''))!;
  t.ok(
    Math.abs(new Date(inv.expires_at).getTime() - order.expiration_time * 1000) < 1000,
    "the server's (earlier) expiry is the invoice's",
  );

  const d = await epusdt.pay(inv.id.replaceAll('-', ''));
  t.ok(d.acknowledged);
  t.equal(d.attempts.length, 1);
  t.equal(d.attempts[0].body, 'ok', 'acknowledged with exactly ok');
  t.equal(await s.balance(u.session), '25.500000000', 'credited exactly the USD of the order');
  t.equal(await chat(other.url, u.key), 200, 'spendable at once in the other process');
  const afterSpend = await s.balance(u.session);
  t.ok(afterSpend < '25.500000000' && afterSpend > '25.4', `the chat was charged (${afterSpend})`);
  const list = await api('GET', '/deposits', { token: u.session });
  t.match(list.json.data[0], {
    id: inv.id,
    method: 'epusdt',
    status: 'paid',
    amount: '25.6',
    currency: 'USDT',
    credit_usd: '25.500000000',
  });

  // The same notification 20 times at once.
  const paid = epusdt.notification(order.order_id);
  const again = await Promise.all(Array.from({ length: 20 }, () => s.notify('epusdt', paid)));
  t.same(
    again.map((r) => r.text),
    Array(20).fill('ok'),
  );
  t.equal(await s.balance(u.session), afterSpend, 'credited once');
  // Expired after paid changes nothing.
  t.equal((await s.notify('epusdt', epusdt.notification(order.order_id, 3))).text, 'ok');
  t.same(
    (await s.depositRows(u.userId)).map((r) => r.status),
    ['paid'],
  );

  // The other coin; a coin not offered.
  const usdc = await api('POST', '/deposit/epusdt/create', {
    token: u.session,
    body: { amount_usd: 3, token: 'usdc.solana' },
  });
  t.equal(usdc.status, 201);
  t.equal(epusdt.requests.at(-1)!.body.trade_type, 'usdc.solana');
  const bad = await api('POST', '/deposit/epusdt/create', {
    token: u.session,
    body: { amount_usd: 3, token: 'doge.moon' },
  });
  t.equal(bad.json.error.code, 'invalid_token');
  for (const amount_usd of [1.99, '500.01', '2.001', 'ten', -5]) {
    const r = await api('POST', '/deposit/epusdt/create', { token: u.session, body: { amount_usd } });
    t.equal(r.status, 400, `amount_usd ${JSON.stringify(amount_usd)}`);
  }
  await sleep(300);
  t.ok(await s.reconciles());
  t.equal((await other.stop()).code, 0);
});

t.test('epusdt notifications: forged, unsigned, wrong amount, unknown order, extra field, expired', async (t) => {
  const s = await startPayments(t, {});
  const { api, epusdt } = s;
  const u = await s.customer();
  const open = async (amount_usd: number) => {
    const r = await api('POST', '/deposit/epusdt/create', { token: u.session, body: { amount_usd } });
    t.equal(r.status, 201, r.text);
    return { ...r.json, orderId: r.json.id.replaceAll('-', '') } as { id: string; orderId: string };
  };
  const a = await open(10);
  const order = epusdt.orders.get(a.orderId)!;
  order.block_transaction_id = 'b1';
  const resign = (body: Record<string, unknown>, token = EPUSDT_TOKEN) => {
    const { signature: _s, ...fields } = body;
    return { ...fields, signature: epusdtSignature(fields as Record<string, string | number>, token) };
  };
  const good = epusdt.notification(a.orderId, 2);
  const cases: [string, unknown, RegExp][] = [
    ['forged', resign(good, 'guessed-token'), /signature does not verify/],
    ['tampered', { ...good, amount: 1000 }, /signature does not verify/],
    ['unsigned', { ...good, signature: undefined }, /field signature is missing/],
    ['wrong amount', resign({ ...good, amount: 9.99 }), /amount 9\.99 is not the order's 10/],
    ['unknown order', resign({ ...good, order_id: 'f'.repeat(32) }), /unknown order/],
    ['not an order id', resign({ ...good, order_id: 'abc' }), /unknown order/],
    // An empty extra field leaves the signature valid: only the strict field list stops it.
    ['extra field', { ...good, fiat: '' }, /unexpected field fiat/],
    ['other wallet', resign({ ...good, token: 'TXYZotherwallet' }), /paid to wallet TXYZotherwallet/],
    ['other trade', resign({ ...good, trade_id: '999' }), /trade_id 999 is not/],
    ['bad status', resign({ ...good, status: 7 }), /field status/],
    ['long field name', { ...good, ['x'.repeat(5000)]: 1 }, /unexpected field x{270,300}…$/],
  ];
  for (const [what, body, reason] of cases) {
    const r = await s.notify('epusdt', body);
    t.not(r.text, 'ok', `${what}: not acknowledged`);
    t.match(r.text, reason, `${what}: ${r.text}`);
    t.ok(
      s.logs.lines.some((l) => l.msg === 'payment notification refused' && reason.test(String(l.reason))),
      `${what}: logged with the reason`,
    );
  }
  t.equal(await s.balance(u.session), '0.000000000', 'none of them credited anything');
  t.same(
    (await s.depositRows(u.userId)).map((r) => r.status),
    ['pending'],
  );
  t.notOk(s.logs.text().includes(EPUSDT_TOKEN), 'the token is never logged');

  // Waiting changes nothing; expired expires; a payment after that still credits.
  t.equal((await s.notify('epusdt', epusdt.notification(a.orderId, 1))).text, 'ok');
  const exp = await epusdt.expire(a.orderId);
  t.ok(exp.acknowledged);
  t.same(
    (await s.depositRows(u.userId)).map((r) => r.status),
    ['expired'],
  );
  t.equal((await s.notify('epusdt', good)).text, 'ok', 'a late payment is acknowledged');
  t.equal(await s.balance(u.session), '10.000000000', 'and credited: the money arrived');

  // A server without a wallet: no invoice, failed.
  epusdt.wallets.length = 0;
  const none = await api('POST', '/deposit/epusdt/create', { token: u.session, body: { amount_usd: 5 } });
  t.equal(none.status, 502);
  t.ok(
    s.logs.lines.some((l) => /no wallet available/.test(String(l.reason))),
    "the provider's refusal is logged",
  );
  t.equal((await s.depositRows(u.userId)).at(-1)!.status, 'failed');
  t.ok(await s.reconciles());
});

t.test('epusdt with fiat=USD, and a token the server does not know', async (t) => {
  const s = await startPayments(t, { EPUSDT_FIAT_USD: 'true', USDT_PER_USD: '7' });
  const u = await s.customer();
  const r = await s.api('POST', '/deposit/epusdt/create', { token: u.session, body: { amount_usd: 12.34 } });
  t.equal(r.status, 201, r.text);
  const sent = s.epusdt.requests.at(-1)!.body;
  t.equal(sent.amount, 12.34, 'USD as is: the server converts');
  t.equal(sent.fiat, 'USD');
  t.notOk('trade_type' in sent);
  t.match((await s.api('GET', '/deposits', { token: u.session })).json.data[0], {
    amount: '12.34',
    currency: 'USD',
    credit_usd: '12.340000000',
  });
  t.equal(
    (await s.api('POST', '/deposit/epusdt/create', { token: u.session, body: { amount_usd: 3, token: 'usdt.trc20' } }))
      .json.error.code,
    'invalid_token',
  );
  await s.epusdt.pay(sent.order_id);
  t.equal(await s.balance(u.session), '12.340000000');
});

t.test('epusdt with the wrong token: the server refuses, nothing is opened', async (t) => {
  const s = await startPayments(t, { EPUSDT_TOKEN: 'not-the-merchant-token' });
  const u = await s.customer();
  const r = await s.api('POST', '/deposit/epusdt/create', { token: u.session, body: { amount_usd: 5 } });
  t.equal(r.status, 502);
  t.ok(s.logs.lines.some((l) => /status_code 401/.test(String(l.reason))));
  t.notOk(s.logs.text().includes('not-the-merchant-token'));
});
