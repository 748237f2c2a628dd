// Every page of the dashboard, with data on it, in Chromium at a phone's 390x844 and a laptop's
// 1366x900, in English and in Indonesian, against a real gateway (Postgres, Redis, the fake
// upstream and the payment fakes). A page fails on: a console message at error level or a
// script error (a failed request included: the browser logs it, so a page must not make one);
// a raw code in its visible text (a deposit state or method, an audit action, an API error code,
// a dictionary key, undefined/NaN/[object Object]); an amount broken across lines; a time
// without its zone; the page wider than the phone; the chart wider than its box.
// The admin pages are the ones the admin menu links to, so a page added to ADMIN_PAGES
// (web/src/pages/admin/shell.tsx) is checked without a change here.

import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { creditUser } from '../../src/accounts/users.js';
import { setAdmin } from '../../src/admin/accounts.js';
import { usdToNano } from '../../src/billing/money.js';
import { ERROR_CODES, FIELD_REASONS } from '../../src/dashboard/error-codes.js';
import { buildWeb } from '../../web/build.js';
import { launchBrowser, SIZES, SKIP_WITHOUT_CHROMIUM } from '../helpers/browser.js';
import { REPO_ROOT } from '../helpers/child.js';
import { signUp } from '../helpers/dashboard.js';
import { PRICES } from '../helpers/gateway.js';
import { chat, QRIS_NOTIFY_SECRET, startPayments, STATIC_QRIS } from '../helpers/payments.js';

// Callbacks given to page.evaluate run in the page; the test process has no DOM types, so the
// little those callbacks touch is declared here.
interface Rect {
  width: number;
  top: number;
  bottom: number;
  right: number;
}
interface El {
  tagName: string;
  className: unknown;
  innerText: string;
  clientWidth: number;
  closest(selector: string): El | null;
  querySelector(selector: string): El | null;
  getClientRects(): Rect[];
  getBoundingClientRect(): Rect;
  getAttribute(name: string): string | null;
}
interface TextNode {
  textContent: string | null;
  parentElement: El | null;
}
interface TextRange {
  setStart(n: TextNode, at: number): void;
  setEnd(n: TextNode, at: number): void;
  selectNodeContents(n: El): void;
  getClientRects(): Rect[];
}
declare const document: {
  documentElement: { scrollWidth: number };
  body: El;
  createTreeWalker(root: El, show: number): { nextNode(): TextNode | null };
  createRange(): TextRange;
  querySelectorAll(selector: string): Iterable<El>;
};
declare const NodeFilter: { SHOW_TEXT: number };
declare const localStorage: { setItem(k: string, v: string): void };

type Dict = Record<string, string>;
const WEB = '../../web/src/';
const { DICTS } = (await import(`${WEB}i18n.js`)) as { DICTS: Record<'en' | 'id', Dict> };
const { ADMIN_DICTS } = (await import(`${WEB}pages/admin/words.js`)) as { ADMIN_DICTS: Record<'en' | 'id', Dict> };

/** Every `code: '…'` a GatewayError is given, and its kinds: what the usage log's error_code can hold. */
function gatewayCodes(): string[] {
  const src = path.join(REPO_ROOT, 'src');
  const codes = new Set<string>(['internal']);
  for (const f of readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((x) => x.endsWith('.ts'))) {
    const text = readFileSync(path.join(src, f), 'utf8');
    for (const m of text.matchAll(/\bcode: '([a-z][a-z_]+)'/g)) codes.add(m[1]);
    // Audit actions: the dotted ids recordAudit is given.
    if (text.includes('recordAudit')) for (const m of text.matchAll(/'([a-z]+\.[a-z_]+)'/g)) codes.add(m[1]);
  }
  const kinds = /const STATUS: Record<ErrorKind, number> = \{([^}]+)\}/.exec(
    readFileSync(path.join(src, 'errors.ts'), 'utf8'),
  )![1];
  for (const m of kinds.matchAll(/(\w+):/g)) codes.add(m[1]);
  return [...codes];
}

/** Raw codes found anywhere in the text, as whole tokens: none is a word of either language. */
const RAW_TOKENS = [
  ...gatewayCodes().filter((c) => c.includes('_') || c.includes('.')),
  ...ERROR_CODES,
  ...FIELD_REASONS.filter((r) => r.includes('_')),
  ...Object.keys(DICTS.en),
  ...Object.keys(ADMIN_DICTS.en),
  'undefined',
  'NaN',
  'null',
  'Infinity',
];
/** Raw codes that are also plain words: only a piece of text that is nothing but the code counts. */
const RAW_ALONE = [
  ...gatewayCodes().filter((c) => !c.includes('_') && !c.includes('.')),
  'pending',
  'paid',
  'expired',
  'failed',
  'open',
  'redeemed',
  'qris',
  'epusdt',
  'midtrans',
  'code',
  'operator',
  'chat',
  'messages',
  'responses',
  'gemini',
  'embeddings',
  'true',
  'false',
];
const RAW_TEXT = ['[object Object]', 'Invalid Date', 'object Object'];

interface Finding {
  raw: string[];
  wrapped: string[];
  zoneless: string[];
  width: number;
  chart: string[];
}

/** Runs in the page: what this file fails a page on, found in what the page shows. */
function inspect(args: { tokens: string[]; alone: string[]; texts: string[] }): Finding {
  const tokens = new Set(args.tokens);
  const alone = new Set(args.alone);
  const out: Finding = { raw: [], wrapped: [], zoneless: [], width: document.documentElement.scrollWidth, chart: [] };
  // Lines a piece of text takes: boxes that overlap in height are on one line (a badge's box sits
  // a little above the text beside it).
  const lines = (rects: Rect[]) => {
    let count = 0;
    let bottom = -Infinity;
    for (const r of [...rects].filter((x) => x.width > 0).sort((x, y) => x.top - y.top)) {
      if (r.top >= bottom - 1) {
        count++;
        bottom = r.bottom;
      } else bottom = Math.max(bottom, r.bottom);
    }
    return count;
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const money = /-?(?:US\$|\$|IDR|Rp)\s?-?\d[\d.,]*\d|-?(?:US\$|\$|IDR|Rp)\s?\d/g;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement!;
    // Model ids, request ids and a catalogue entry's JSON are code on purpose.
    if (el.closest('code, pre, script, style, noscript')) continue;
    const text = n.textContent ?? '';
    if (!text.trim()) continue;
    const shown = el.closest('select') !== null || el.getClientRects().length > 0;
    if (!shown) continue;
    const where = `${el.tagName.toLowerCase()}${el.className ? `.${String(el.className).split(' ').join('.')}` : ''}`;
    if (alone.has(text.trim())) out.raw.push(`${text.trim()} (${where})`);
    for (const tok of text.split(/[^A-Za-z0-9_.]+/)) {
      const tk = tok.replace(/\.+$/, '');
      if (tokens.has(tk)) out.raw.push(`${tk} in "${text.trim().slice(0, 80)}" (${where})`);
    }
    for (const s of args.texts) if (text.includes(s)) out.raw.push(`${s} in "${text.trim().slice(0, 80)}" (${where})`);
    if (el.closest('select')) continue;
    for (const m of text.matchAll(money)) {
      const r = document.createRange();
      r.setStart(n, m.index!);
      r.setEnd(n, m.index! + m[0].length);
      if (lines(r.getClientRects()) > 1) out.wrapped.push(`${m[0]} (${where})`);
    }
    // A time to the second names its zone (format.ts dateTime).
    for (const m of text.matchAll(/\b\d{1,2}[:.]\d{2}[:.]\d{2}\b(?!\s*(?:GMT|UTC|WIB|WITA|WIT|[A-Z]{2,5}\b))/g))
      out.zoneless.push(`${m[0]} in "${text.trim().slice(0, 80)}"`);
  }
  for (const el of document.querySelectorAll('.money, td.num, th.num')) {
    const r = document.createRange();
    r.selectNodeContents(el);
    if (el.getClientRects().length > 0 && lines(r.getClientRects()) > 1)
      out.wrapped.push(`${el.innerText.replace(/\s+/g, ' ')} (${el.tagName.toLowerCase()}.${el.className})`);
  }
  for (const box of document.querySelectorAll('.chart')) {
    const canvas = box.querySelector('canvas');
    if (canvas && canvas.getBoundingClientRect().right > box.getBoundingClientRect().right + 1)
      out.chart.push(`canvas ${canvas.getBoundingClientRect().width}px in a ${box.clientWidth}px box`);
  }
  return out;
}

const LOADING = /Loading…|Memuat…/;

async function settle(page: Page) {
  await page.waitForLoadState('networkidle');
  await page.waitForFunction((re) => !new RegExp(re).test(document.body.innerText), LOADING.source, {
    timeout: 10_000,
  });
  await page.waitForTimeout(100);
}

/** Opens `paths` in one language, each checked at both sizes; returns every fault it saw. */
async function checkPages(t: Test, page: Page, base: string, paths: string[], lang: string, problems: string[]) {
  for (const p of paths) {
    problems.length = 0;
    await page.setViewportSize(SIZES.desktop);
    await page.goto(`${base}${p}`);
    await settle(page);
    t.ok((await page.locator('main').innerText()).trim().length > 0, `${lang} ${p}: shows something`);
    for (const [size, viewport] of Object.entries(SIZES)) {
      await page.setViewportSize(viewport);
      await page.waitForTimeout(200);
      const f = await page.evaluate(inspect, { tokens: RAW_TOKENS, alone: RAW_ALONE, texts: RAW_TEXT });
      const at = `${lang} ${p} at ${size}`;
      t.same(f.raw, [], `${at}: no raw code`);
      t.same(f.wrapped, [], `${at}: no amount broken across lines`);
      t.same(f.zoneless, [], `${at}: every time names its zone`);
      t.same(f.chart, [], `${at}: the chart fits its box`);
      if (size === 'phone') t.ok(f.width <= viewport.width, `${at}: no sideways scrolling (${f.width}px)`);
    }
    t.same(problems, [], `${lang} ${p}: no console error or script error`);
  }
}

t.test(
  'every page, both languages, phone and laptop: no raw code, no broken amount, no console error',
  { skip: SKIP_WITHOUT_CHROMIUM },
  async (t) => {
    const webDir = path.join(mkdtempSync(path.join(tmpdir(), 'airouter-web-')), 'dist');
    await buildWeb(webDir);
    const s = await startPayments(t, {
      QRIS_MODE: 'merchant',
      QRIS_STATIC_PAYLOAD: STATIC_QRIS,
      QRIS_NOTIFY_SECRET,
      EPUSDT_MIN_USD: '1',
      WEB_DIR: webDir,
    });
    const { api, gw } = s;
    const sql = gw.services.sql;
    const admin = await signUp(s, 'admin password 123');
    await setAdmin(sql, { id: null, label: 'test setup' }, admin.userId, true);
    const adminApi = async (method: string, p: string, body?: unknown) => {
      const r = await api(method, `/api/admin${p}`, { token: admin.session, body });
      if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${r.text}`);
      return r.json;
    };

    // A user with a bit of everything: credit with many decimals, deposits in every state and
    // method, a code redeemed, requests answered, refused and failed upstream, an alert above the
    // balance (the banner on every page).
    const user = await s.customer();
    await creditUser(sql, gw.services.hot, user.userId, usdToNano('23.4999958'), {
      method: 'operator',
      amount: '23.4999958',
      currency: 'USD',
    });
    for (const [method, status, amount, currency, credit] of [
      ['qris', 'pending', 32500, 'IDR', 2_000_000_000],
      ['qris', 'expired', 1_625_000, 'IDR', 100_000_000_000],
      ['qris', 'failed', 16250, 'IDR', 1_000_000_000],
      ['epusdt', 'paid', 12.5, 'USD', 12_500_000_000],
    ] as const) {
      await sql`INSERT INTO deposits (user_id, method, status, amount, currency, credit_nano, provider, expires_at, paid_at)
              VALUES (${user.userId}, ${method}, ${status}, ${amount}, ${currency}, ${credit}, ${method}, now() + interval '1 hour', ${status === 'paid' ? new Date() : null})`;
    }
    const [pending] = await sql<
      { id: string }[]
    >`SELECT id FROM deposits WHERE user_id = ${user.userId} AND status = 'pending'`;
    const codes = (await adminApi('POST', '/codes', {
      count: 2,
      amount_usd: '2.25',
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      note: 'layout test',
    })) as { codes: string[] };
    t.equal(
      (await api('POST', '/api/dashboard/redeem', { token: user.session, body: { code: codes.codes[0] } })).status,
      200,
      'a code redeemed',
    );
    await adminApi('POST', `/users/${user.userId}/credit`, { amount_usd: '1.000000001', reason: 'goodwill' });
    // A model whose only route is a closed port: a request to it fails upstream (502).
    const cat = (await adminApi('GET', '/catalogue')) as { document: { models: unknown[] } };
    cat.document.models.push({
      id: 'dead-model',
      owned_by: 'fake',
      max_output_tokens: 1000,
      ...PRICES,
      routes: [{ provider: 'dead', model: 'x' }],
    });
    await adminApi('POST', '/catalogue', cat.document);
    for (let i = 0; i < 3; i++) t.equal(await chat(gw.url, user.key), 200, 'an answered request');
    const post = (model: string) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
      });
    t.equal((await post('no-such-model')).status, 404, 'a refused request');
    t.equal((await post('dead-model')).status, 502, 'a request failed upstream');
    t.equal(
      (await api('POST', '/api/dashboard/alerts', { token: user.session, body: { low_balance_usd: '500' } })).status,
      200,
      'an alert above the balance',
    );
    // The usage log is written a moment later.
    for (let i = 0; i < 50; i++) {
      const u = await api('GET', '/usage?range=24h', { token: user.session });
      if (u.json.data.length >= 5) break;
      await new Promise((r) => setTimeout(r, 200));
    }

    const browser = await launchBrowser(t);
    const USER_PAGES = [
      '/',
      '/overview',
      '/keys',
      '/usage',
      '/playground',
      '/catalogue',
      '/topup',
      `/topup?deposit=${pending.id}`,
      '/deposits',
      '/account',
      '/admin/audit',
    ];
    // The four readers at once, each in its own context: most of a page's time is waiting for
    // the network to go quiet, and one after the other they were the suite's longest file.
    const readers = (['en', 'id'] as const).flatMap((lang) =>
      [
        { name: 'user', session: user.session },
        { name: 'admin', session: admin.session },
      ].map((who) => ({ lang, who })),
    );
    await Promise.all(
      readers.map(async ({ lang, who }) => {
        const context = await browser.newContext({
          viewport: SIZES.desktop,
          locale: lang === 'id' ? 'id-ID' : 'en-US',
          timezoneId: 'Asia/Jakarta',
        });
        // The test's loader names functions with a helper (__name) that the page lacks.
        await context.addInitScript('globalThis.__name = (f) => f');
        await context.addInitScript(
          ({ l, token }) => {
            localStorage.setItem('airouter.lang', l);
            localStorage.setItem('airouter.session', token);
          },
          { l: lang, token: who.session },
        );
        const page = await context.newPage();
        page.setDefaultTimeout(10_000);
        const problems: string[] = [];
        page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
        page.on('console', (m) => {
          if (m.type() === 'error') problems.push(`console: ${m.text()} ${m.location().url}`);
        });
        if (who.name === 'user') {
          // The user's pages, and an admin page, which a user is refused without an error logged.
          await checkPages(t, page, gw.url, USER_PAGES, `${lang} user`, problems);
          t.equal(await page.getByTestId('nav-admin').count(), 0, `${lang}: no admin link for a user`);
        } else {
          await page.goto(`${gw.url}/admin`);
          await settle(page);
          const links = await page
            .getByRole('navigation', { name: lang === 'id' ? 'Menu admin' : 'Admin menu' })
            .getByRole('link')
            .evaluateAll((as) => as.map((a) => (a as unknown as El).getAttribute('href')!));
          t.ok(links.length >= 7, `${lang}: the admin menu's ${links.length} pages`);
          await checkPages(t, page, gw.url, [...links, `/admin?user=${user.userId}`], `${lang} admin`, problems);
        }
        await context.close();
      }),
    );
  },
);
