// Deposit tests: the payment fakes, a gateway (real stores, dashboard) whose PUBLIC_URL is its
// own address so that the fakes' notifications reach it, captured logs, a funded-by-deposit
// user with a key, and a second gateway process to spend from.

import jsqr from 'jsqr';
import { PNG } from 'pngjs';
import { pino } from 'pino';
import type { Test } from 'tap';
import { Writable } from 'node:stream';
import { reconcile } from '../../src/billing/reconcile.js';
import { startFakeEpusdt, type FakeEpusdt } from '../fake-payments/epusdt.js';
import { startFakeMidtrans, type FakeMidtrans } from '../fake-payments/midtrans.js';
import { childEnv, freePort, startServe, type ServeChild } from './child.js';
import { signUp, startDashboard, type DashboardSetup } from './dashboard.js';
import { readResponse } from './http.js';
import { REDIS_URL } from './stores.js';
import { request } from 'undici';

export const MIDTRANS_SERVER_KEY = 'SB-Mid-server-TEST0123456789abcdef';
export const EPUSDT_TOKEN = 'epusdt_password_xasddawqe';
export const QRIS_NOTIFY_SECRET = 'merchant-watcher-secret-0123456789';
/** The static QRIS example (valid CRC). */
export const STATIC_QRIS =
  '00020101021126570011ID.DANA.WWW011893600915302259148102090225914810303UMI51440014ID.CO.QRIS.WWW0215ID10200176114730303UMI5204581253033605802ID5922Warung Sayur Bu Sugeng6010Kab. Demak610559567630458C7';

export interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

/** A pino logger whose lines land in `lines` (parsed). */
export function captureLog() {
  const lines: LogLine[] = [];
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) lines.push(JSON.parse(l));
        cb();
      },
    }),
  );
  return { log, lines, text: () => lines.map((l) => JSON.stringify(l)).join('\n') };
}

export interface PaymentsSetup extends DashboardSetup {
  midtrans: FakeMidtrans;
  epusdt: FakeEpusdt;
  logs: ReturnType<typeof captureLog>;
  /** POST a raw notification to /api/payments/{provider}/notify. */
  notify(
    provider: string,
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; text: string; json: any }>;
  /** A signed-up user with a session and a service key, balance 0. */
  customer(): Promise<{ userId: string; email: string; session: string; key: string }>;
  balance(session: string): Promise<string>;
  depositRows(
    userId: string,
  ): Promise<{ id: string; status: string; credit_nano: bigint; external_id: string | null }[]>;
  reconciles(): Promise<boolean>;
}

export async function startPayments(t: Test, env: Record<string, string> = {}): Promise<PaymentsSetup> {
  const midtrans = await startFakeMidtrans({ serverKey: MIDTRANS_SERVER_KEY });
  t.teardown(() => midtrans.close());
  const epusdt = await startFakeEpusdt({ token: EPUSDT_TOKEN });
  t.teardown(() => epusdt.close());
  const port = await freePort();
  const logs = captureLog();
  const s = await startDashboard(
    t,
    {
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      IDR_PER_USD: '16250',
      MIDTRANS_URL: midtrans.url,
      MIDTRANS_SERVER_KEY,
      EPUSDT_URL: epusdt.url,
      EPUSDT_TOKEN,
      ...env,
    },
    { log: logs.log },
  );
  const sql = s.gw.services.sql;
  return {
    ...s,
    midtrans,
    epusdt,
    logs,
    async notify(provider, body, headers = {}) {
      const res = await request(`${s.gw.url}/api/payments/${provider}/notify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return readResponse(res);
    },
    async customer() {
      const u = await signUp(s);
      const k = await s.api('POST', '/keys', { token: u.session, body: { name: 'deposit test' } });
      if (k.status !== 201) throw new Error(`key: ${k.status} ${k.text}`);
      return { userId: u.userId, email: u.email, session: u.session, key: k.json.key };
    },
    async balance(session) {
      const r = await s.api('GET', '/balance', { token: session });
      return r.json.balance_usd;
    },
    depositRows: (userId) =>
      sql`SELECT id, status, credit_nano, external_id FROM deposits WHERE user_id = ${userId} ORDER BY created_at` as any,
    // Postgres (balance = credits − charges) and every loaded hot account against it.
    reconciles: async () => (await reconcile(sql, s.gw.services.hot)).ok,
  };
}

/** `airouter serve` in its own process on the same Postgres and Redis, serving chat. */
export async function spendingGateway(t: Test, s: PaymentsSetup): Promise<ServeChild> {
  const env = childEnv({
    DATABASE_URL: s.gw.services.config.DATABASE_URL,
    REDIS_URL: s.gw.services.config.REDIS_URL ?? REDIS_URL,
    REDIS_PREFIX: s.gw.services.config.REDIS_PREFIX,
    GATEWAY_CONFIG: s.gw.configPath,
    FAKE_OPENAI_KEY: process.env.FAKE_OPENAI_KEY,
    FAKE_ANTHROPIC_KEY: process.env.FAKE_ANTHROPIC_KEY,
  });
  return startServe(t, env, 60_000);
}

/** One small chat completion with `key` on `url`; returns the HTTP status. */
export async function chat(url: string, key: string): Promise<number> {
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'oa-model', max_tokens: 20, messages: [{ role: 'user', content: 'Hello' }] }),
  });
  await res.body.text();
  return res.statusCode;
}

// jsqr is a webpack bundle whose typings declare an ES default export; at run time the module
// itself is the function.
type JsQR = typeof import('jsqr').default;
const jsQR = ((jsqr as unknown as { default?: JsQR }).default ?? jsqr) as JsQR;

/** The text of the QR code in a PNG data URL, read back with a QR decoder. */
export function decodeQrPng(dataUrl: string): string | undefined {
  const png = PNG.sync.read(Buffer.from(dataUrl.replace(/^data:image\/png;base64,/, ''), 'base64'));
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data;
}
