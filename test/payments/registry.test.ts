// The payment provider registry: what every provider must provide, held against each one
// registered; its variables documented, its notification route and its method's deposit route
// registered; and the generic deposit route answering exactly as the older paths, which are its
// aliases, against the fake providers over HTTP.

import { existsSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ENV_DOCS, loadConfig } from '../../src/config.js';
import { PREFIX } from '../../src/dashboard/http.js';
import { registerDashboard } from '../../src/dashboard/routes.js';
import type { PaymentProvider } from '../../src/payments/provider.js';
import { PROVIDERS } from '../../src/payments/providers.js';
import { DEPOSIT_METHODS, PROVIDER_CONFIGS } from '../../src/payments/configs.js';
import { registerPayments } from '../../src/payments/routes.js';
import type { RouteDef, Router } from '../../src/server/router.js';
import type { Gateway } from '../../src/services.js';
import { REPO_ROOT } from '../helpers/child.js';
import { signUp, startDashboard } from '../helpers/dashboard.js';
import { QRIS_NOTIFY_SECRET, startPayments, STATIC_QRIS } from '../helpers/payments.js';

const registered = PROVIDERS;
const fn = (x: unknown) => typeof x === 'function';

/** What a provider must provide: each property and the check it must pass. */
const CONTRACT: Record<keyof PaymentProvider, (x: unknown) => boolean> = {
  id: (x) => typeof x === 'string' && /^[a-z][a-z0-9-]{0,31}$/.test(x),
  method: (x) =>
    typeof x === 'string' &&
    /^[a-z][a-z0-9-]{0,31}$/.test(x) &&
    !['publicUrl', 'expiryS', 'maxOpen', 'disabled'].includes(x),
  methodName: (x) => typeof x === 'string' && x.trim() !== '',
  env: (x) =>
    typeof x === 'object' &&
    x !== null &&
    Object.entries(x).every(
      ([name, e]) =>
        /^[A-Z][A-Z0-9_]+$/.test(name) &&
        typeof e?.doc === 'string' &&
        e.doc !== '' &&
        typeof e.schema?.['~run'] === 'function' &&
        [undefined, true].includes(e.secret),
    ),
  settings: fn,
  enabled: fn,
  info: fn,
  body: (x) => typeof (x as { '~run'?: unknown })?.['~run'] === 'function',
  doc: (x) => {
    const d = x as Partial<Record<string, unknown>> | null;
    return (
      typeof d?.summary === 'string' &&
      d.summary !== '' &&
      typeof d.description === 'string' &&
      typeof d.answered === 'string' &&
      typeof (d.answer as { '~run'?: unknown })?.['~run'] === 'function'
    );
  },
  start: fn,
  notifyAnswer: (x) => x === 'json' || x === 'text',
};

/** The routes a registration adds, as "method path". */
function routesOf(register: (r: Router) => void): string[] {
  const defs: RouteDef[] = [];
  register({ add: (d: RouteDef) => void defs.push(d) } as unknown as Router);
  return defs.map((d) => `${d.method} ${d.path}`);
}

t.test('every registered provider provides what a provider must', async (t) => {
  t.ok(registered.length > 0);
  t.equal(new Set(registered.map((p) => p.id)).size, registered.length, 'ids are unique');
  for (const p of registered) {
    for (const [name, check] of Object.entries(CONTRACT))
      t.ok(check((p as unknown as Record<string, unknown>)[name]), `${p.id}: ${name}`);
    t.same(Object.keys(p).sort(), Object.keys(CONTRACT).sort(), `${p.id}: nothing more, nothing less`);
    const folder = path.join(REPO_ROOT, 'src/payments', p.id);
    t.ok(existsSync(path.join(folder, 'index.ts')), `${p.id}: its folder has an index.ts`);
    const mod = (await import(path.join(folder, 'index.js'))) as Record<string, unknown>;
    t.equal(mod[p.id], p, `${p.id}: index.ts exports the registered object under its id (what providers.ts loads)`);
    // Its light half, which src/config.ts reads without loading the provider's clients.
    const light = (await import(path.join(folder, 'settings.js'))) as Record<string, unknown>;
    const config = PROVIDER_CONFIGS.find((c) => c.id === p.id);
    t.ok(
      config && Object.values(light).includes(config),
      `${p.id}: settings.ts exports its light half, listed in the registry (configs.ts)`,
    );
    for (const k of ['id', 'method', 'methodName', 'env', 'settings'] as const)
      t.equal(p[k], config?.[k], `${p.id}: ${k} is its light half's`);
  }
  t.same(
    PROVIDER_CONFIGS.map((c) => c.id),
    registered.map((p) => p.id),
    'the providers are loaded in the order of the registry (configs.ts)',
  );
  // Providers of one method share what belongs to the method.
  for (const method of DEPOSIT_METHODS) {
    const serving = registered.filter((p) => p.method === method);
    for (const p of serving.slice(1)) {
      for (const k of ['settings', 'body', 'info', 'methodName'] as const)
        t.equal(p[k], serving[0][k], `${method}: ${p.id} shares ${k} with ${serving[0].id}`);
    }
  }
});

t.test('each provider, under a configuration that enables it, starts and describes its method', async (t) => {
  const configs: Record<string, Record<string, string>> = {
    midtrans: { QRIS_MODE: 'midtrans', IDR_PER_USD: '16250', MIDTRANS_SERVER_KEY: 'SB-Mid-server-xyz' },
    qris: { QRIS_MODE: 'merchant', IDR_PER_USD: '16250', QRIS_STATIC_PAYLOAD: STATIC_QRIS, QRIS_NOTIFY_SECRET },
    epusdt: { EPUSDT_URL: 'http://127.0.0.1:9', EPUSDT_TOKEN: 'tok-12345678' },
  };
  t.same(
    Object.keys(configs).sort(),
    registered.map((p) => p.id).sort(),
    'a configuration for each registered provider (add one here with a new provider)',
  );
  for (const p of registered) {
    const settings = (loadConfig(configs[p.id]).payments as unknown as Record<string, unknown>)[p.method];
    t.ok(settings && p.enabled(settings), `${p.id}: enabled`);
    const others = registered.filter((o) => o.method === p.method && o !== p);
    for (const o of others) t.notOk(o.enabled(settings), `${p.method}: ${o.id} is off while ${p.id} serves it`);
    t.equal(p.info(settings, 900).id, p.method, `${p.id}: its info names the method`);
    const live = p.start(settings);
    t.ok(fn(live.open), `${p.id}: opens invoices`);
    t.ok(fn(live.notify), `${p.id}: handles notifications`);
  }
  t.same(loadConfig({}).payments.disabled, [], 'nothing asked for, nothing off');
});

t.test('every provider variable is documented, once', async (t) => {
  const seen = new Map<string, unknown>();
  for (const p of registered) {
    for (const [name, e] of Object.entries(p.env)) {
      t.equal(ENV_DOCS[name], e.doc, `${p.id}: ${name} is in ENV_DOCS as declared`);
      if (seen.has(name)) t.equal(e, seen.get(name), `${name}: declared once, shared`);
      seen.set(name, e);
    }
  }
});

t.test("every notification path and every method's deposit route is routed", async (t) => {
  const s = await startDashboard(t);
  const payments = routesOf((r) => registerPayments(r, s.gw.services as Gateway));
  for (const p of registered) t.ok(payments.includes(`post /api/payments/${p.id}/notify`), `${p.id}: notify routed`);
  const dashboard = routesOf((r) => registerDashboard(r, s.gw.services as Gateway));
  for (const method of DEPOSIT_METHODS)
    t.ok(dashboard.includes(`post ${PREFIX}/deposits/${method}`), `${method}: POST /deposits/${method}`);
  for (const alias of ['/topup/qris', '/deposit/epusdt/create'])
    t.ok(dashboard.includes(`post ${PREFIX}${alias}`), `alias ${alias}`);
  // Routed though nothing is configured: a session first, then the method is off.
  t.equal((await s.api('POST', '/deposits/qris', { body: { amount_idr: 50000 } })).status, 401, 'no session');
  const u = await signUp(s);
  const off = await s.api('POST', '/deposits/qris', { token: u.session, body: { amount_idr: 50000 } });
  t.same(
    [off.status, off.json.error.code, off.json.error.message],
    [404, 'method_disabled', 'QRIS deposits are not enabled on this gateway.'],
  );
});

/** An invoice answer without what differs between two invoices (ids, codes, times). */
const terms = (j: Record<string, unknown>) => {
  const { id, qr_string, qr_png, payment_url, expires_at, ...rest } = j;
  return { ...rest, has: [id, qr_string, qr_png, payment_url, expires_at].map((x) => typeof x) };
};

const same = async (
  t: Test,
  send: (path: string, body: unknown) => Promise<{ status: number; json: any }>,
  paths: [string, string],
  body: unknown,
  what: string,
) => {
  const [a, b] = [await send(paths[0], body), await send(paths[1], body)];
  t.equal(a.status, b.status, `${what}: the same status (${a.status})`);
  if (a.status === 201) t.same(terms(a.json), terms(b.json), `${what}: the same invoice`);
  else t.same(a.json, b.json, `${what}: the same answer`);
  return [a, b];
};

t.test('POST /deposits/{method} answers as its aliases: QRIS by Midtrans, epusdt', async (t) => {
  const s = await startPayments(t, { QRIS_MODE: 'midtrans', DEPOSIT_MAX_OPEN: '20' });
  const u = await s.customer();
  const send = (p: string, body: unknown) => s.api('POST', p, { token: u.session, body });
  const qris: [string, string] = ['/deposits/qris', '/topup/qris'];
  const usdt: [string, string] = ['/deposits/epusdt', '/deposit/epusdt/create'];
  const [viaNew] = await same(t, send, qris, { amount_idr: 50000 }, 'qris');
  for (const body of [{ amount_idr: 5 }, { amount_idr: 'many' }, {}, []])
    await same(t, send, qris, body, `qris ${JSON.stringify(body)}`);
  const [usdNew] = await same(t, send, usdt, { amount_usd: '12.5', token: undefined }, 'epusdt');
  for (const body of [{ amount_usd: '0.5' }, { amount_usd: 3, token: 'doge.moon' }, { amount_usd: 'ten' }])
    await same(t, send, usdt, body, `epusdt ${JSON.stringify(body)}`);

  // The deposits the generic route opened belong to the method's provider, and pay as any other.
  const rows = await s.gw.services.sql<
    { id: string; method: string; provider: string }[]
  >`SELECT id, method, provider FROM deposits WHERE user_id = ${u.userId}`;
  t.same(
    rows.find((r) => r.id === viaNew.json.id),
    { id: viaNew.json.id, method: 'qris', provider: 'midtrans' },
  );
  t.same(
    rows.find((r) => r.id === usdNew.json.id),
    { id: usdNew.json.id, method: 'epusdt', provider: 'epusdt' },
  );
  const [paid] = await s.midtrans.pay(viaNew.json.id);
  t.ok(paid.acknowledged);
  t.equal(await s.balance(u.session), viaNew.json.credit_usd, 'credited once, as the invoice said');
  t.ok(await s.reconciles());
});

t.test("POST /deposits/qris on the merchant's own code, and a method that is off", async (t) => {
  const s = await startPayments(t, {
    QRIS_MODE: 'merchant',
    QRIS_STATIC_PAYLOAD: STATIC_QRIS,
    QRIS_NOTIFY_SECRET,
    EPUSDT_URL: '',
    EPUSDT_TOKEN: '',
  });
  const u = await s.customer();
  const send = (p: string, body: unknown) => s.api('POST', p, { token: u.session, body });
  // Each open invoice has its own amount here, so the two answers differ by exactly that.
  const [a, b] = [
    await send('/deposits/qris', { amount_idr: 20000 }),
    await send('/topup/qris', { amount_idr: 20000 }),
  ];
  t.same([a.status, b.status], [201, 201]);
  t.same(Object.keys(a.json), Object.keys(b.json), 'the same invoice fields');
  t.same([a.json.amount_idr, b.json.amount_idr], [20001, 20002], 'unique amounts across both paths');
  for (const body of [{ amount_idr: 5 }, { amount_idr: 'many' }])
    await same(t, send, ['/deposits/qris', '/topup/qris'], body, `merchant qris ${JSON.stringify(body)}`);
  const [off] = await same(t, send, ['/deposits/epusdt', '/deposit/epusdt/create'], { amount_usd: 5 }, 'epusdt off');
  t.equal(off.status, 404);
  t.equal(off.json.error.code, 'method_disabled');
  const rows = await s.gw.services.sql<
    { provider: string }[]
  >`SELECT DISTINCT provider FROM deposits WHERE user_id = ${u.userId}`;
  t.same(rows, [{ provider: 'qris' }]);
  t.equal((await send('/deposits/paypal', { amount: 1 })).status, 404, 'no such method: no such endpoint');
});
