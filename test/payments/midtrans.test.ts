// QRIS through Midtrans, end to end against the fake Midtrans over HTTP: charge, the
// notifications Midtrans sends (pending at once, settlement when paid), the status read back,
// every way a notification can be wrong, and the credit spent at once from another process.

import t from 'tap';
import { nanoToUsd } from '../../src/billing/money.js';
import { createHash } from 'node:crypto';
import { parsePayload, fieldValue } from '../../src/payments/qris/emv.js';
import { isEnvelope } from '../helpers/dashboard.js';
import { chat, decodeQrPng, MIDTRANS_SERVER_KEY, spendingGateway, startPayments } from '../helpers/payments.js';
import { runCli, childEnv } from '../helpers/child.js';
import { answerErrors } from '../helpers/openapi.js';
import { sleep } from '../helpers/http.js';

/** The credit of `idr` rupiah at 16250 IDR/USD less 2.5 %, in nano-USD, from the rule itself. */
const creditOf = (idr: bigint) => (idr * 975n * 1_000_000_000n) / (1000n * 16250n);

const signed = (order_id: string, status_code: string, gross_amount: string, key = MIDTRANS_SERVER_KEY) =>
  createHash('sha512').update(`${order_id}${status_code}${gross_amount}${key}`).digest('hex');

t.test('QRIS by Midtrans: create, pay, credit once, spend elsewhere', async (t) => {
  const s = await startPayments(t, { QRIS_MODE: 'midtrans', QRIS_FEE_PCT: '2.5', DEPOSIT_MAX_OPEN: '3' });
  const { api, midtrans } = s;
  const alice = await s.customer();

  const info = await api('GET', '/deposit/info', { token: alice.session });
  t.equal(info.status, 200);
  const qris = info.json.methods.find((m: any) => m.id === 'qris');
  t.same(
    qris,
    { id: 'qris', currency: 'IDR', min: '10000', max: '10000000', rate: '16250', fee_pct: '2.5', expiry_s: 900 },
    'public parameters only',
  );
  t.notOk(info.text.includes(MIDTRANS_SERVER_KEY) || info.text.includes(midtrans.url), 'no key or provider address');

  // Another process serves chat; the user has nothing yet, and that process knows it.
  const other = await spendingGateway(t, s);
  t.equal(await chat(other.url, alice.key), 402, 'nothing to spend before the deposit');

  const created = await api('POST', '/topup/qris', { token: alice.session, body: { amount_idr: 123456 } });
  t.equal(created.status, 201, created.text);
  const inv = created.json;
  const credit = creditOf(123456n);
  t.match(inv, { status: 'pending', amount_idr: 123456, credit_usd: nanoToUsd(credit) }, 'the invoice');
  t.equal(decodeQrPng(inv.qr_png), inv.qr_string, 'the PNG decodes to the QR text');
  const fields = parsePayload(inv.qr_string);
  t.equal(fieldValue(fields, '54'), '123456', 'the QR carries the amount');
  const charge = midtrans.requests.find((r) => r.path === '/v2/charge')!;
  t.same(charge.body.transaction_details, { order_id: inv.id, gross_amount: 123456 });
  t.equal(charge.headers['x-override-notification'], `${s.gw.url}/api/payments/midtrans/notify`);
  t.same(charge.body.custom_expiry, { expiry_duration: 900, unit: 'second' });
  const tx = midtrans.transactions.get(inv.id)!;
  t.equal(inv.qr_string, tx.qr_string, 'the QR is the one Midtrans made');

  // Midtrans notifies the pending state at once: acknowledged, nothing changes.
  await Promise.all(midtrans.deliveries.map((d) => d.done));
  t.ok(midtrans.deliveries[0]?.acknowledged, 'pending notification acknowledged');
  t.equal(await s.balance(alice.session), '0.000000000');

  const [paid] = await midtrans.pay(inv.id);
  t.ok(paid.acknowledged, 'settlement acknowledged');
  t.equal(paid.attempts.length, 1);
  t.equal(await s.balance(alice.session), nanoToUsd(credit), 'the balance rose by exactly the stored credit');
  t.equal(await chat(other.url, alice.key), 200, 'spendable at once in the other process');

  const list = await api('GET', '/deposits', { token: alice.session });
  t.match(list.json.data[0], {
    id: inv.id,
    method: 'qris',
    status: 'paid',
    amount: '123456',
    currency: 'IDR',
    credit_usd: nanoToUsd(credit),
  });
  t.ok(list.json.data[0].paid_at);
  const one = await api('GET', `/deposits/${inv.id}`, { token: alice.session });
  t.match(one.json, { id: inv.id, status: 'paid', qr_string: null, payment_url: null });

  const doc = (await api('GET', '/openapi.json')).json;
  for (const [path, method, r] of [
    ['/deposit/info', 'get', info],
    ['/topup/qris', 'post', created],
    ['/deposits/{id}', 'get', one],
    ['/deposits', 'get', list],
  ] as const) {
    t.same(answerErrors(doc, path, method, r), [], `${method} ${path} ${r.status} fits the OpenAPI document`);
  }

  await sleep(300); // usage of the chat reaches Postgres
  t.ok(await s.reconciles(), 'the ledger reconciles');
  t.equal((await other.stop()).code, 0);
});

t.test('Midtrans notifications: repeats, forgeries, mismatches, out of order', async (t) => {
  const s = await startPayments(t, { QRIS_MODE: 'midtrans', QRIS_FEE_PCT: '2.5', DEPOSIT_MAX_OPEN: '3' });
  const { api, midtrans } = s;
  const bob = await s.customer();
  const mallory = await s.customer();
  const open = async (who: { session: string }, amount_idr: number) => {
    const r = await api('POST', '/topup/qris', { token: who.session, body: { amount_idr } });
    t.equal(r.status, 201, r.text);
    return r.json as { id: string; credit_usd: string };
  };
  const refusals = (reason: RegExp) =>
    s.logs.lines.filter((l) => l.msg === 'payment notification refused' && reason.test(String(l.reason)));

  const a = await open(bob, 50_000);
  await Promise.all(midtrans.deliveries.map((d) => d.done));

  // Only the status read back counts: a pending notification with its (unsigned) status
  // rewritten to settlement credits nothing.
  const tampered = {
    ...midtrans.notification(a.id),
    transaction_status: 'settlement',
    settlement_time: '2030-01-01 00:00:00',
  };
  const r1 = await s.notify('midtrans', tampered);
  t.equal(r1.status, 200);
  t.same(r1.json, { deposit_id: a.id, status: 'pending' }, 'still pending: Midtrans says so');
  t.equal(await s.balance(bob.session), '0.000000000');

  // Forged and mis-signed.
  const settle = { ...midtrans.notification(a.id, 'settlement') };
  const forged = { ...settle, signature_key: signed(a.id, '200', settle.gross_amount, 'not-the-server-key') };
  const r2 = await s.notify('midtrans', forged);
  t.equal(r2.status, 401);
  t.equal(r2.json.error.code, 'refused');
  const unsigned = { ...settle } as Record<string, string>;
  delete unsigned.signature_key;
  t.equal((await s.notify('midtrans', unsigned)).status, 400, 'unsigned');
  t.equal((await s.notify('midtrans', '{"order_id":')).status, 400, 'not JSON');
  t.equal((await s.notify('midtrans', [settle])).status, 400, 'not an object');
  // Signed with the right key, but not this order's amount.
  const cheap = { ...settle, gross_amount: '500.00', signature_key: signed(a.id, '200', '500.00') };
  const r3 = await s.notify('midtrans', cheap);
  t.equal(r3.status, 409);
  t.match(r3.json.error.message, /gross_amount 500\.00 is not the order's 50000/);
  // An order nobody made.
  const ghost = '7d0e4b1c-6f0a-4b8e-9c1d-2a3b4c5d6e7f';
  t.equal(
    (
      await s.notify('midtrans', {
        ...settle,
        order_id: ghost,
        signature_key: signed(ghost, '200', settle.gross_amount),
      })
    ).status,
    404,
  );
  t.equal(await s.balance(bob.session), '0.000000000', 'nothing credited by any of them');
  t.ok(refusals(/signature_key does not verify/).length >= 1, 'the forgery is logged with its reason');
  t.ok(refusals(/gross_amount 500\.00/).length >= 1, 'the wrong amount is logged');
  t.ok(refusals(/unknown order/).length >= 1, 'the unknown order is logged');
  t.ok(refusals(/signature_key is missing|field signature_key/).length >= 1, 'the unsigned one is logged');
  t.notOk(s.logs.text().includes(MIDTRANS_SERVER_KEY), 'the server key is never logged');

  // Paid; then the same settlement 20 times at once: one credit.
  await midtrans.pay(a.id);
  const credited = await s.balance(bob.session);
  t.equal(credited, a.credit_usd);
  const again = await Promise.all(Array.from({ length: 20 }, () => s.notify('midtrans', settle)));
  t.same(
    again.map((r) => r.status),
    Array(20).fill(200),
    'all acknowledged',
  );
  t.equal(await s.balance(bob.session), credited, 'credited once');
  // Out of order: the old pending notification, then an expire and a cancel after the payment.
  for (const state of ['pending', 'expire', 'cancel'] as const) {
    const r = await s.notify('midtrans', midtrans.notification(a.id, state));
    t.equal(r.status, 200, `${state} after settlement acknowledged`);
    t.equal(r.json.status, 'paid', `${state} after settlement changes nothing`);
  }
  t.equal(await s.balance(bob.session), credited);
  const rows = await s.depositRows(bob.userId);
  t.same(
    rows.map((r) => r.status),
    ['paid'],
  );
  t.equal(
    rows[0].external_id,
    midtrans.transactions.get(a.id)!.transaction_id,
    'the Midtrans transaction id is the reference',
  );

  // Money taken back after the credit: nothing is undone automatically; the operator is told.
  const [refund] = await midtrans.refund(a.id);
  t.ok(refund.acknowledged);
  t.equal(await s.balance(bob.session), credited, 'a refund does not touch the balance');
  t.ok(
    s.logs.lines.some((l) => l.level === 50 && l.deposit_id === a.id && /taken back/.test(l.msg)),
    'it is logged as an error for the operator',
  );

  // Another user's deposit id is no deposit at all to mallory, as is a malformed one.
  t.equal((await api('GET', `/deposits/${a.id}`, { token: mallory.session })).status, 404);
  t.equal((await api('GET', '/deposits/not-a-uuid', { token: mallory.session })).status, 404);
  const mine = await api('GET', `/deposits/${a.id}`, { token: bob.session });
  t.equal(mine.status, 200);
  const doc = (await api('GET', '/openapi.json')).json;

  // Ended by Midtrans: expire → expired, deny → failed.
  const b = await open(bob, 20_000);
  const c = await open(bob, 30_000);
  await Promise.all(midtrans.deliveries.map((d) => d.done));
  await midtrans.expire(b.id);
  await midtrans.deny(c.id);
  const list = await api('GET', '/deposits', { token: bob.session });
  const statusOf = (id: string) => list.json.data.find((d: any) => d.id === id)?.status;
  t.equal(statusOf(b.id), 'expired');
  t.equal(statusOf(c.id), 'failed');

  // The limit of open invoices counts pending ones only.
  await open(bob, 10_000);
  await open(bob, 10_001);
  await open(bob, 10_002);
  const fourth = await api('POST', '/topup/qris', { token: bob.session, body: { amount_idr: 10_003 } });
  t.equal(fourth.status, 429);
  t.equal(fourth.json.error.code, 'too_many_open_deposits');
  t.ok(Number(fourth.headers['retry-after']) >= 1, 'with retry-after');
  t.ok(isEnvelope(fourth));
  t.same(answerErrors(doc, '/topup/qris', 'post', fourth), [], 'the 429 is documented');
  const pendingOne = await api('GET', `/deposits/${b.id}`, { token: bob.session });
  t.same(answerErrors(doc, '/deposits/{id}', 'get', pendingOne), []);
  const stillOpen = (await api('GET', '/deposits', { token: bob.session })).json.data.find(
    (d: any) => d.status === 'pending',
  );
  const shown = await api('GET', `/deposits/${stillOpen.id}`, { token: bob.session });
  t.equal(decodeQrPng(shown.json.qr_png), shown.json.qr_string, 'a pending invoice shows its QR again');
  t.same(answerErrors(doc, '/deposits/{id}', 'get', shown), []);

  // Bad input.
  for (const body of [{ amount_idr: 9_999 }, { amount_idr: 10_000_001 }]) {
    const r = await api('POST', '/topup/qris', { token: mallory.session, body });
    t.equal(r.json?.error?.code, 'amount_out_of_range', JSON.stringify(body));
  }
  for (const body of [
    {},
    { amount_idr: 10000.5 },
    { amount_idr: '1e5' },
    { amount_idr: -10000 },
    { amount_idr: null },
  ]) {
    const r = await api('POST', '/topup/qris', { token: mallory.session, body });
    t.equal(r.status, 400, JSON.stringify(body));
  }
  t.equal((await api('POST', '/topup/qris', { body: { amount_idr: 50000 } })).status, 401, 'no session');
  t.ok(await s.reconciles());
});

t.test('Midtrans down: no invoice, and a notification is retried until the status can be read', async (t) => {
  const s = await startPayments(t, { QRIS_MODE: 'midtrans' });
  const { api, midtrans } = s;
  const u = await s.customer();
  midtrans.down.charge = true;
  const r = await api('POST', '/topup/qris', { token: u.session, body: { amount_idr: 50_000 } });
  t.equal(r.status, 502);
  t.equal(r.json.error.code, 'provider_error');
  t.same(answerErrors((await api('GET', '/openapi.json')).json, '/topup/qris', 'post', r), [], 'the 502 is documented');
  t.notOk(r.text.includes(midtrans.url), 'the provider address is not shown');
  const [failed] = await s.depositRows(u.userId);
  t.equal(failed.status, 'failed', 'the invoice nobody can pay is marked failed');
  midtrans.down.charge = false;

  const ok = await api('POST', '/topup/qris', { token: u.session, body: { amount_idr: 50_000 } });
  t.equal(ok.status, 201);
  await Promise.all(midtrans.deliveries.map((d) => d.done));
  midtrans.down.status = true;
  const paid = midtrans.pay(ok.json.id);
  // The first attempts are refused (503): Midtrans retries.
  await sleep(60);
  t.equal(await s.balance(u.session), '0.000000000', 'nothing credited while the status cannot be read');
  midtrans.down.status = false;
  const [d] = await paid;
  t.ok(d.acknowledged);
  t.ok(d.attempts.length >= 2, `acknowledged after ${d.attempts.length} attempts`);
  t.equal(d.attempts[0].status, 503);
  t.equal(await s.balance(u.session), ok.json.credit_usd);
  t.ok(await s.reconciles());
});

t.test('a payment after the local expiry still credits, and the CLI reconciles', async (t) => {
  const s = await startPayments(t, { QRIS_MODE: 'midtrans', DEPOSIT_EXPIRY_S: '1' });
  const { api, midtrans } = s;
  const u = await s.customer();
  const inv = (await api('POST', '/topup/qris', { token: u.session, body: { amount_idr: 80_000 } })).json;
  // The sweeper (every 500 ms for a 1 s expiry) expires it without anyone looking.
  let status = 'pending';
  for (let i = 0; i < 40 && status === 'pending'; i++) {
    await sleep(100);
    status = (await s.depositRows(u.userId))[0].status;
  }
  t.equal(status, 'expired', 'expired by the sweeper');
  const [d] = await midtrans.pay(inv.id);
  t.ok(d.acknowledged);
  t.equal(await s.balance(u.session), inv.credit_usd, 'the money arrived, so it is credited');
  t.ok(
    s.logs.lines.some((l) => /paid after it had expired/.test(l.msg) && l.deposit_id === inv.id),
    'and logged',
  );
  const cfg = s.gw.services.config;
  const r = await runCli(
    ['reconcile'],
    childEnv({ DATABASE_URL: cfg.DATABASE_URL, REDIS_URL: cfg.REDIS_URL, REDIS_PREFIX: cfg.REDIS_PREFIX }),
  );
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /users checked, 0 mismatches/);
});
