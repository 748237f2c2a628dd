// QRIS on the merchant's own static code: dynamic codes with an amount unique among open
// invoices, confirmed by a signed notification from the account watcher or by the operator's
// `airouter deposit confirm`.

import t from 'tap';
import { nanoToUsd } from '../../src/billing/money.js';
import { qrisSignature } from '../../src/payments/qris/signature.js';
import { toDynamic } from '../../src/payments/qris/emv.js';
import { childEnv, lines, runCli } from '../helpers/child.js';
import {
  chat,
  decodeQrPng,
  QRIS_NOTIFY_SECRET,
  spendingGateway,
  startPayments,
  STATIC_QRIS,
} from '../helpers/payments.js';
import { sleep } from '../helpers/http.js';

const creditOf = (idr: bigint) => (idr * 1_000_000_000n) / 16250n;

t.test('own-merchant QRIS: unique amounts, signed notifications, operator confirmation', async (t) => {
  const s = await startPayments(t, {
    QRIS_MODE: 'merchant',
    QRIS_STATIC_PAYLOAD: STATIC_QRIS,
    QRIS_NOTIFY_SECRET,
    EPUSDT_URL: '',
    EPUSDT_TOKEN: '',
  });
  const { api } = s;
  const ann = await s.customer();
  const ben = await s.customer();
  const signedPost = (body: unknown, secret = QRIS_NOTIFY_SECRET) => {
    const raw = JSON.stringify(body);
    return s.notify('qris', raw, { 'x-signature': qrisSignature(raw, secret) });
  };

  const info = await api('GET', '/deposit/info', { token: ann.session });
  t.same(
    info.json.methods.map((m: any) => m.id),
    ['qris'],
    'only QRIS is configured',
  );
  t.notOk(
    info.text.includes('Warung') || info.text.includes(QRIS_NOTIFY_SECRET),
    'neither the merchant string nor the secret',
  );

  const other = await spendingGateway(t, s);
  t.equal(await chat(other.url, ann.key), 402);

  // Two users ask for the same amount at once, several times: every open amount differs.
  const asks = await Promise.all(
    [ann, ben, ann, ben, ann, ben].map((u) =>
      api('POST', '/topup/qris', { token: u.session, body: { amount_idr: '50000' } }),
    ),
  );
  t.same(
    asks.map((r) => r.status),
    Array(6).fill(201),
  );
  const amounts = asks.map((r) => r.json.amount_idr).sort();
  t.same(amounts, [50001, 50002, 50003, 50004, 50005, 50006], 'the requested amount plus the smallest free suffix');
  for (const r of asks) {
    t.equal(r.json.qr_string, toDynamic(STATIC_QRIS, BigInt(r.json.amount_idr)), 'the static code with the amount');
    t.equal(decodeQrPng(r.json.qr_png), r.json.qr_string, 'the PNG decodes to it');
    t.equal(r.json.credit_usd, nanoToUsd(creditOf(BigInt(r.json.amount_idr))), 'credit from the amount paid');
  }
  const annInv = asks[0].json;
  const benInv = asks[1].json;

  // The watcher's notification; the same one 20 times at once.
  const note = { deposit_id: annInv.id, amount_idr: annInv.amount_idr, reference: 'RRN-000123' };
  const many = await Promise.all(Array.from({ length: 20 }, () => signedPost(note)));
  t.same(
    many.map((r) => r.status),
    Array(20).fill(200),
  );
  t.equal(await s.balance(ann.session), annInv.credit_usd, 'credited once');
  t.equal(await chat(other.url, ann.key), 200, 'spendable at once in the other process');

  const cases: [string, () => Promise<{ status: number; json: any }>, number, RegExp][] = [
    [
      'forged',
      () =>
        signedPost(
          { ...note, deposit_id: benInv.id, amount_idr: benInv.amount_idr, reference: 'RRN-1' },
          'a guessed secret of some length',
        ),
      401,
      /x-signature does not verify/,
    ],
    [
      'unsigned',
      () => s.notify('qris', { deposit_id: benInv.id, amount_idr: benInv.amount_idr, reference: 'RRN-2' }),
      401,
      /no x-signature/,
    ],
    [
      'wrong amount',
      () => signedPost({ deposit_id: benInv.id, amount_idr: 50000, reference: 'RRN-3' }),
      409,
      /amount_idr 50000 is not the invoice's/,
    ],
    [
      'unknown deposit',
      () => signedPost({ deposit_id: '7d0e4b1c-6f0a-4b8e-9c1d-2a3b4c5d6e7f', amount_idr: 50000, reference: 'RRN-4' }),
      404,
      /unknown deposit/,
    ],
    [
      'extra field',
      () =>
        signedPost({ deposit_id: benInv.id, amount_idr: benInv.amount_idr, reference: 'RRN-5', credit_usd: '1000' }),
      400,
      /unexpected field credit_usd/,
    ],
    [
      'reference reused',
      () => signedPost({ deposit_id: benInv.id, amount_idr: benInv.amount_idr, reference: 'RRN-000123' }),
      409,
      /already paid another deposit/,
    ],
    ['paid twice', () => signedPost({ ...note, reference: 'RRN-999' }), 409, /already paid under reference RRN-000123/],
  ];
  for (const [what, send, status, reason] of cases) {
    const r = await send();
    t.equal(r.status, status, `${what}: ${JSON.stringify(r.json)}`);
    t.ok(
      s.logs.lines.some((l) => l.msg === 'payment notification refused' && reason.test(String(l.reason))),
      `${what}: logged with the reason`,
    );
  }
  t.equal(await s.balance(ben.session), '0.000000000', 'none of them credited ben');

  // The operator confirms ben's invoice from the command line (another process).
  const cfg = s.gw.services.config;
  const env = childEnv({ DATABASE_URL: cfg.DATABASE_URL, REDIS_URL: cfg.REDIS_URL, REDIS_PREFIX: cfg.REDIS_PREFIX });
  const [confirmed, bad, none] = await Promise.all([
    runCli(['deposit', 'confirm', benInv.id, '--reference', 'RRN-777'], env),
    runCli(['deposit', 'confirm', 'nonsense'], env),
    runCli(['deposit', 'confirm', '7d0e4b1c-6f0a-4b8e-9c1d-2a3b4c5d6e7f'], env),
  ]);
  t.equal(confirmed.code, 0, confirmed.stderr);
  t.match(
    confirmed.stdout,
    new RegExp(
      `^confirmed deposit ${benInv.id} \\(qris, ${benInv.amount_idr} IDR\\): credited \\$${benInv.credit_usd.replace('.', '\\.')} to ${ben.email}; balance \\$${benInv.credit_usd.replace('.', '\\.')}\\n$`,
    ),
  );
  t.equal(await s.balance(ben.session), benInv.credit_usd, 'the credit reached the hot balance');
  for (const [r, re] of [
    [bad, /is not a deposit id/],
    [none, /no deposit 7d0e4b1c/],
  ] as const) {
    t.equal(r.code, 1);
    t.equal(lines(r.stderr).length, 1);
    t.match(r.stderr, re);
  }
  const twice = await runCli(['deposit', 'confirm', benInv.id], env);
  t.equal(twice.code, 1);
  t.match(twice.stderr, /is already paid .* nothing credited/);
  t.equal(
    (await signedPost({ deposit_id: benInv.id, amount_idr: benInv.amount_idr, reference: 'RRN-777' })).status,
    200,
    "the watcher's later notification is a harmless repeat",
  );
  t.equal(await s.balance(ben.session), benInv.credit_usd);

  // Paid amounts are free again: both ann's and ben's first invoices are paid now, and the
  // concurrent asks above gave them their amounts in no fixed order, so the smaller one comes back.
  const next = await api('POST', '/topup/qris', { token: ann.session, body: { amount_idr: 50000 } });
  t.equal(next.json.amount_idr, Math.min(annInv.amount_idr, benInv.amount_idr), 'the smaller paid amount is reused');

  await sleep(300);
  t.ok(await s.reconciles());
  t.equal((await other.stop()).code, 0);
});

t.test('own-merchant QRIS without a notify secret: the CLI only', async (t) => {
  const s = await startPayments(t, { QRIS_MODE: 'merchant', QRIS_STATIC_PAYLOAD: STATIC_QRIS, DEPOSIT_EXPIRY_S: '1' });
  const u = await s.customer();
  const inv = (await s.api('POST', '/topup/qris', { token: u.session, body: { amount_idr: 20000 } })).json;
  const raw = JSON.stringify({ deposit_id: inv.id, amount_idr: inv.amount_idr, reference: 'X' });
  const r = await s.notify('qris', raw, { 'x-signature': qrisSignature(raw, '') });
  t.equal(r.status, 404, 'the endpoint is off');
  t.equal((await s.notify('midtrans', {})).status, 404, 'so is Midtrans in merchant mode');
  t.equal((await s.notify('bitcoin', {})).status, 404, 'and providers that do not exist');
  // Expired, then confirmed by the operator: the money arrived late, it still counts.
  await sleep(1100);
  t.equal(
    (await s.api('GET', '/deposits', { token: u.session })).json.data[0].status,
    'expired',
    'the owner sees the expiry at once',
  );
  const cfg = s.gw.services.config;
  const ok = await runCli(
    ['deposit', 'confirm', inv.id],
    childEnv({ DATABASE_URL: cfg.DATABASE_URL, REDIS_URL: cfg.REDIS_URL, REDIS_PREFIX: cfg.REDIS_PREFIX }),
  );
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /after it had expired/);
  t.equal(await s.balance(u.session), inv.credit_usd);
  t.ok(await s.reconciles());
});
