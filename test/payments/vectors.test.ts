// The protocol facts as test vectors: the epusdt MD5 signature (both published vectors), the
// Midtrans SHA-512 signature, the QRIS CRC check value and the static → dynamic example, the
// QR PNG decoded back; and the exact amount arithmetic.

import t from 'tap';
import { createHash, createHmac } from 'node:crypto';
import { epusdtSignature, epusdtSignString, epusdtSignatureValid } from '../../src/payments/epusdt/signature.js';
import { midtransSignature, midtransSignatureValid } from '../../src/payments/midtrans/signature.js';
import { qrisSignature, qrisSignatureValid } from '../../src/payments/qris/signature.js';
import { checkStaticPayload, crc16, parsePayload, parseTlv, toDynamic, withCrc } from '../../src/payments/qris/emv.js';
import { qrPngDataUrl } from '../../src/payments/qr-image.js';
import {
  centsToNano,
  formatDecimal,
  idrCreditNano,
  numberText,
  parseDecimal,
  sameAmount,
  usdCents,
  usdToPayCents,
} from '../../src/payments/amounts.js';
import { midtransOutcome } from '../../src/payments/midtrans/notification.js';
import { asDepositId } from '../../src/payments/notify.js';
import { decodeQrPng } from '../helpers/payments.js';

const TOKEN = 'epusdt_password_xasddawqe';
const STATIC =
  '00020101021126570011ID.DANA.WWW011893600915302259148102090225914810303UMI51440014ID.CO.QRIS.WWW0215ID10200176114730303UMI5204581253033605802ID5922Warung Sayur Bu Sugeng6010Kab. Demak610559567630458C7';
const DYNAMIC_25000 =
  '00020101021226570011ID.DANA.WWW011893600915302259148102090225914810303UMI51440014ID.CO.QRIS.WWW0215ID10200176114730303UMI5204581253033605405250005802ID5922Warung Sayur Bu Sugeng6010Kab. Demak610559567630468D5';

t.test('epusdt signature vectors', async (t) => {
  const create = {
    amount: 42.0,
    notify_url: 'http://example.com/notify',
    order_id: '20220201030210321',
    redirect_url: 'http://example.com/redirect',
  };
  t.equal(
    epusdtSignString(create),
    'amount=42&notify_url=http://example.com/notify&order_id=20220201030210321&redirect_url=http://example.com/redirect',
  );
  t.equal(epusdtSignature(create, TOKEN), '1cd4b52df5587cfb1968b0c0c6e156cd');
  // Order of the fields, nulls and empty strings do not matter; the signature itself is left out.
  t.equal(
    epusdtSignature(
      {
        redirect_url: 'http://example.com/redirect',
        order_id: '20220201030210321',
        trade_type: '',
        fiat: null,
        notify_url: 'http://example.com/notify',
        amount: 42,
        signature: 'x',
      },
      TOKEN,
    ),
    '1cd4b52df5587cfb1968b0c0c6e156cd',
  );
  const notify = {
    trade_id: '202203251648208648961728',
    order_id: '2022123321312321321',
    amount: 100,
    actual_amount: 15.625,
    token: 'TNEns8t9jbWENbStkQdVQtHMGpbsYsQjZK',
    block_transaction_id: '123333333321232132131',
    status: 2,
  };
  t.equal(epusdtSignature(notify, TOKEN), 'a9a2530ea673dbf920e50ff6a9ce4789');
  // From the raw JSON, as a notification arrives: 100.00 and 15.6250 are the same numbers.
  const raw = JSON.parse(
    '{"trade_id":"202203251648208648961728","order_id":"2022123321312321321","amount":100.00,"actual_amount":15.6250,"token":"TNEns8t9jbWENbStkQdVQtHMGpbsYsQjZK","block_transaction_id":"123333333321232132131","signature":"A9A2530EA673DBF920E50FF6A9CE4789","status":2}',
  );
  t.ok(epusdtSignatureValid(raw, TOKEN), 'verifies (any letter case)');
  t.notOk(epusdtSignatureValid({ ...raw, status: 3 }, TOKEN), 'a changed field breaks it');
  t.notOk(epusdtSignatureValid({ ...raw, amount: 1e-7 }, TOKEN), 'an amount without a decimal form cannot verify');
  t.notOk(epusdtSignatureValid({ ...raw, signature: 'a9a2530ea673dbf920e50ff6a9ce478' }, TOKEN), 'a short signature');
  t.notOk(epusdtSignatureValid({ ...raw, signature: undefined }, TOKEN), 'no signature');
  t.throws(() => epusdtSignature({ amount: 1e21 }, TOKEN), /no plain decimal form/);
});

t.test('Midtrans and merchant signatures', async (t) => {
  const key = 'SB-Mid-server-abc123';
  const expected = createHash('sha512')
    .update('order-1' + '200' + '100000.00' + key)
    .digest('hex');
  t.equal(midtransSignature('order-1', '200', '100000.00', key), expected);
  t.ok(
    midtransSignatureValid(
      { order_id: 'order-1', status_code: '200', gross_amount: '100000.00', signature_key: expected },
      key,
    ),
  );
  t.notOk(
    midtransSignatureValid(
      { order_id: 'order-1', status_code: '200', gross_amount: '100000', signature_key: expected },
      key,
    ),
    'the amount exactly as sent',
  );
  t.notOk(
    midtransSignatureValid(
      { order_id: 'order-1', status_code: '200', gross_amount: '100000.00', signature_key: 42 },
      key,
    ),
  );
  const body = Buffer.from('{"deposit_id":"x","amount_idr":1,"reference":"r"}');
  t.equal(qrisSignature(body, 'secret'), createHmac('sha256', 'secret').update(body).digest('hex'));
  t.ok(qrisSignatureValid(body, 'secret', qrisSignature(body, 'secret')));
  t.notOk(
    qrisSignatureValid(Buffer.from(body.toString() + ' '), 'secret', qrisSignature(body, 'secret')),
    'over the raw bytes',
  );
  t.equal(midtransOutcome({ transaction_status: 'capture', fraud_status: 'accept' }), 'paid');
  t.equal(midtransOutcome({ transaction_status: 'capture', fraud_status: 'challenge' }), 'pending');
  t.equal(midtransOutcome({ transaction_status: 'capture', fraud_status: 'deny' }), 'failed');
  t.equal(midtransOutcome({ transaction_status: 'refund' }), 'reversed');
  t.equal(midtransOutcome({ transaction_status: 'failure' }), 'failed');
  t.equal(midtransOutcome({ transaction_status: 'authorize' }), 'pending');
});

t.test('QRIS: CRC, TLV, static → dynamic', async (t) => {
  t.equal(crc16('123456789'), '29B1', 'the CRC-16/CCITT-FALSE check value');
  t.equal(crc16(STATIC.slice(0, -4)), '58C7');
  t.doesNotThrow(() => checkStaticPayload(STATIC));
  t.equal(toDynamic(STATIC, 25000n), DYNAMIC_25000, 'the example, byte for byte');
  t.equal(toDynamic(DYNAMIC_25000, 30000n), toDynamic(STATIC, 30000n), 'an existing amount is replaced, not doubled');
  t.equal(parsePayload(DYNAMIC_25000).find((f) => f.id === '54')?.value, '25000');
  t.same(
    parseTlv('000201010211'),
    [
      { id: '00', value: '01' },
      { id: '01', value: '11' },
    ],
    'id, length, value',
  );
  // Field 54 goes before the first field past it, or last.
  t.equal(
    toDynamic(
      withCrc([
        { id: '00', value: '01' },
        { id: '01', value: '11' },
        { id: '53', value: '360' },
      ]),
      7n,
    ),
    withCrc([
      { id: '00', value: '01' },
      { id: '01', value: '12' },
      { id: '53', value: '360' },
      { id: '54', value: '7' },
    ]),
  );
  const bad: [string, RegExp][] = [
    [STATIC.slice(0, -4) + '58C8', /CRC is 58C8, the content gives 58C7/],
    [STATIC.slice(0, -10), /runs past the end|CRC field/],
    ['0102' + STATIC.slice(4), /payload format/],
    ['000201010x11', /malformed field header/],
    [DYNAMIC_25000, /point of initiation .* is "12"/],
    [
      withCrc([
        { id: '00', value: '01' },
        { id: '01', value: '11' },
        { id: '26', value: 'x' },
        { id: '53', value: '840' },
      ]),
      /currency/,
    ],
    [
      withCrc([
        { id: '00', value: '01' },
        { id: '01', value: '11' },
        { id: '26', value: 'x' },
        { id: '53', value: '360' },
        { id: '54', value: '5' },
      ]),
      /already carries an amount/,
    ],
    [
      withCrc([
        { id: '00', value: '01' },
        { id: '01', value: '11' },
        { id: '53', value: '360' },
      ]),
      /no merchant account/,
    ],
    ['00020101021126570011ID.DANA.WWW\u00e9', /printable ASCII/],
  ];
  for (const [payload, re] of bad) t.throws(() => checkStaticPayload(payload), re, String(re));
  t.throws(() => toDynamic(STATIC, 0n), /positive/);
  t.throws(() => withCrc([{ id: '59', value: 'x'.repeat(100) }]), /longer than 99/);
});

t.test('the QR PNG decodes back to the text', async (t) => {
  for (const text of [DYNAMIC_25000, toDynamic(STATIC, 9_999_999n)]) {
    const url = await qrPngDataUrl(text);
    t.match(url, /^data:image\/png;base64,/);
    t.equal(decodeQrPng(url), text);
  }
});

t.test('amounts are decimals, compared and converted exactly', async (t) => {
  t.ok(sameAmount('25000.00', '25000'));
  t.ok(sameAmount(25000, '25000.000'));
  t.ok(sameAmount(0.3, '0.30'), 'the JSON number 0.3 is the decimal 0.3');
  t.notOk(sameAmount(0.1 + 0.2, '0.3'), 'a float sum is not');
  t.notOk(sameAmount('25000.01', '25000'));
  t.notOk(sameAmount('-1', '-1'), 'no signs');
  t.notOk(sameAmount('1e3', '1000'), 'no exponents');
  t.notOk(sameAmount(null, '0'));
  t.equal(numberText(15.625), '15.625');
  t.equal(numberText(1e21), null);
  t.equal(numberText(-1), null);
  t.equal(formatDecimal(parseDecimal('042.500')!), '42.5');
  t.equal(formatDecimal(parseDecimal('0.00')!), '0');
  t.equal(usdCents('25.5'), 2550n);
  t.equal(usdCents(25.5), 2550n);
  t.equal(usdCents('25.500'), 2550n, 'trailing zeros are no extra precision');
  t.equal(usdCents('25.505'), null);
  t.equal(centsToNano(2550n), 25_500_000_000n);
  // 25.50 USD at 1.0037 = 25.59435 → 25.60, up to the cent.
  t.equal(formatDecimal(usdToPayCents(2550n, parseDecimal('1.0037')!)), '25.6');
  t.equal(formatDecimal(usdToPayCents(1000n, parseDecimal('1')!)), '10');
  // 123456 IDR at 16250 IDR/USD less 2.5 % = 7.40736 USD exactly; a third of a nano is dropped.
  t.equal(idrCreditNano(123456n, parseDecimal('16250')!, parseDecimal('2.5')!), 7_407_360_000n);
  t.equal(idrCreditNano(1n, parseDecimal('3')!, parseDecimal('0')!), 333_333_333n, 'rounded down');
  t.equal(idrCreditNano(100n, parseDecimal('0.5')!, parseDecimal('0.25')!), 199_500_000_000n);
  t.equal(asDepositId('7D0E4B1C6F0A4B8E9C1D2A3B4C5D6E7F'), '7d0e4b1c-6f0a-4b8e-9c1d-2a3b4c5d6e7f');
  t.equal(asDepositId('7d0e4b1c-6f0a-4b8e-9c1d-2a3b4c5d6e7f'), '7d0e4b1c-6f0a-4b8e-9c1d-2a3b4c5d6e7f');
  t.equal(asDepositId('nope'), null);
});
