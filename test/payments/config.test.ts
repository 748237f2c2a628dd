// Payment configuration: a method is on only when its settings are complete; wrong values stop
// start-up with one line that names the variable and never shows a secret.

import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config.js';
import { childEnv, lines, runCli } from '../helpers/child.js';
import { captureLog, STATIC_QRIS } from '../helpers/payments.js';
import { startTestGateway } from '../helpers/gateway.js';
import { startFakeUpstream } from '../fake-upstream/server.js';

const refused = (env: Record<string, string>): string => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return '(accepted)';
};

t.test('methods are on only when complete', async (t) => {
  const none = loadConfig({}).payments;
  t.same([none.qris, none.epusdt, none.disabled], [null, null, []], 'nothing configured, nothing on');

  const midtrans = loadConfig({
    QRIS_MODE: 'midtrans',
    IDR_PER_USD: '16250.5',
    MIDTRANS_SERVER_KEY: 'SB-Mid-server-xyz',
  }).payments;
  t.equal(midtrans.qris?.mode, 'midtrans');
  t.equal(midtrans.qris?.midtrans?.url, 'https://api.midtrans.com', 'production API by default');
  t.same(midtrans.qris?.idrPerUsd, { units: 162505n, scale: 1 });
  t.equal(midtrans.qris?.merchant, null);

  const half = loadConfig({ QRIS_MODE: 'midtrans', EPUSDT_URL: 'http://pay.example' }).payments;
  t.equal(half.qris, null);
  t.equal(half.epusdt, null);
  t.same(half.disabled, [
    'QRIS (QRIS_MODE=midtrans) is off: IDR_PER_USD, MIDTRANS_SERVER_KEY not set',
    'epusdt is off: EPUSDT_TOKEN not set',
  ]);

  const merchant = loadConfig({
    QRIS_MODE: 'merchant',
    IDR_PER_USD: '16000',
    QRIS_STATIC_PAYLOAD: STATIC_QRIS,
  }).payments;
  t.same(merchant.qris?.merchant, { staticPayload: STATIC_QRIS, notifySecret: null }, 'no secret: the CLI confirms');
  t.same(loadConfig({ QRIS_MODE: 'merchant', IDR_PER_USD: '16000' }).payments.disabled, [
    'QRIS (QRIS_MODE=merchant) is off: QRIS_STATIC_PAYLOAD not set',
  ]);

  const e = loadConfig({
    EPUSDT_URL: 'https://pay.example/',
    EPUSDT_TOKEN: 'tok-12345678',
    EPUSDT_TRADE_TYPES: 'usdt.trc20,usdc.erc20,usdt.trc20',
    EPUSDT_FIAT_USD: 'true',
  }).payments.epusdt;
  t.match(e, {
    url: 'https://pay.example',
    fiatUsd: true,
    minCents: 100n,
    maxCents: 1_000_000n,
    tradeTypes: ['usdt.trc20', 'usdc.erc20'],
  });
});

t.test('wrong values stop start-up with one line', async (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [
      { QRIS_STATIC_PAYLOAD: STATIC_QRIS.slice(0, -4) + '0000' },
      /^Invalid environment: QRIS_STATIC_PAYLOAD is not a usable static QRIS code: CRC is 0000, the content gives 58C7$/,
    ],
    [{ QRIS_STATIC_PAYLOAD: 'hello' }, /QRIS_STATIC_PAYLOAD is not a usable static QRIS code: malformed field header/],
    [{ QRIS_MODE: 'paypal' }, /QRIS_MODE must be midtrans or merchant \(got "paypal"\)/],
    [{ IDR_PER_USD: '16,250' }, /IDR_PER_USD must be a decimal number/],
    [{ IDR_PER_USD: '0' }, /IDR_PER_USD must be more than 0/],
    [{ QRIS_FEE_PCT: '100' }, /QRIS_FEE_PCT must be below 100/],
    [{ QRIS_MIN_IDR: '50000', QRIS_MAX_IDR: '40000' }, /QRIS_MIN_IDR \(50000\) is above QRIS_MAX_IDR \(40000\)/],
    [{ MIDTRANS_URL: 'ftp://x' }, /MIDTRANS_URL must be a URL starting with http:\/\/ or https:\/\//],
    [{ EPUSDT_MIN_USD: '0.001' }, /EPUSDT_MIN_USD must be a decimal number with at most 2 decimals/],
    [{ EPUSDT_MIN_USD: '0.01' }, /EPUSDT_MIN_USD must make an amount above 0\.01/],
    [{ EPUSDT_MIN_USD: '20', EPUSDT_MAX_USD: '10' }, /EPUSDT_MIN_USD \(20\) is above EPUSDT_MAX_USD \(10\)/],
    [{ USDT_PER_USD: '0' }, /USDT_PER_USD must be more than 0/],
    [{ EPUSDT_FIAT_USD: 'yes' }, /EPUSDT_FIAT_USD must be true or false/],
    [{ EPUSDT_TRADE_TYPES: 'USDT' }, /EPUSDT_TRADE_TYPES must be a comma-separated list/],
    [{ DEPOSIT_MAX_OPEN: '0' }, /DEPOSIT_MAX_OPEN must be at least 1/],
    [{ DEPOSIT_EXPIRY_S: 'soon' }, /DEPOSIT_EXPIRY_S must be a whole number/],
  ];
  for (const [env, re] of cases) {
    const message = refused(env);
    t.match(message, re, JSON.stringify(env));
    t.notOk(message.includes('\n'), 'one line');
  }
  // A secret too short is named, never shown.
  for (const name of ['MIDTRANS_SERVER_KEY', 'QRIS_NOTIFY_SECRET', 'EPUSDT_TOKEN']) {
    const message = refused({ [name]: 'hunter2' });
    t.match(message, new RegExp(`^Invalid environment: ${name} must be at least \\d+ characters$`));
    t.notOk(message.includes('hunter2'), `${name} is not echoed`);
  }

  const r = await runCli(
    ['serve'],
    childEnv({
      QRIS_MODE: 'merchant',
      IDR_PER_USD: '16000',
      QRIS_STATIC_PAYLOAD: STATIC_QRIS.replace('Warung', 'Wartel'),
      PORT: '0',
    }),
  );
  t.equal(r.code, 1);
  t.equal(lines(r.stderr).length, 1, r.stderr);
  t.match(
    r.stderr,
    /^airouter: Invalid environment: QRIS_STATIC_PAYLOAD is not a usable static QRIS code: CRC is 58C7, the content gives [0-9A-F]{4}\n$/,
  );
});

t.test('a method asked for but incomplete is off, with a warning at start', async (t) => {
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const logs = captureLog();
  const gw = await startTestGateway(t, {
    upstream: up.url,
    env: { QRIS_MODE: 'midtrans', IDR_PER_USD: '16000' },
    log: logs.log,
  });
  t.ok(
    logs.lines.some(
      (l) => l.level === 40 && l.msg === 'deposits: QRIS (QRIS_MODE=midtrans) is off: MIDTRANS_SERVER_KEY not set',
    ),
  );
  t.same(gw.services.payments.info(), { methods: [] });
});
