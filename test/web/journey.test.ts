// The dashboard in a real browser (Debian's Chromium driven by playwright-core) against a real
// gateway on real Postgres and Redis, the fake upstream and the payment fakes: sign up from
// the mailed link (refusals worded in the page's language under their fields), make keys with
// limits and snippets, see requests in the usage log (filters, CSV) and the chart (exact money),
// the playground's stream and cost, top up by QRIS and watch it turn paid without a reload,
// revoke a key in a dialog, reach every page from a phone's navigation, in both languages.
// Every page is photographed at phone and desktop sizes (under .tap/screenshots) and the
// pictures are checked to show something. The account pages are in account.test.ts.

import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { creditUser } from '../../src/accounts/users.js';
import { usdToNano } from '../../src/billing/money.js';
import { qrisSignature } from '../../src/payments/qris/signature.js';
import { buildWeb } from '../../web/build.js';
import {
  launchBrowser,
  openPage,
  pictureStats,
  shooter,
  shownUsd,
  shownUsdId,
  SIZES,
  SKIP_WITHOUT_CHROMIUM,
  sessionOf,
} from '../helpers/browser.js';
import { newEmail, verifyLinkToken } from '../helpers/dashboard.js';
import { eventually } from '../helpers/http.js';
import { chat, decodeQrPng, QRIS_NOTIFY_SECRET, startPayments, STATIC_QRIS } from '../helpers/payments.js';

// Callbacks given to page.evaluate run in the page. The test process has no DOM types, so the
// little those callbacks touch is declared here.
interface PageElement {
  outerHTML: string;
  closest(selector: string): unknown;
}
interface PageCanvas {
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
}
declare const document: {
  documentElement: { lang: string };
  querySelectorAll(selector: string): Iterable<PageElement>;
  querySelector(selector: string): unknown;
};
declare const window: { notReloaded?: boolean };

const usd2 = (v: string) =>
  new Intl.NumberFormat('en-US', {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  }).format(Number(v));

t.test('the dashboard journey in Chromium', { skip: SKIP_WITHOUT_CHROMIUM }, async (t) => {
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
  const browser = await launchBrowser(t);
  const { page, problems } = await openPage(browser);
  const shoot = shooter(t, page);
  const alertText = () => page.locator('[role=alert]').first().innerText();

  const nav = (name: string) => page.getByRole('navigation').getByRole('link', { name, exact: true }).click();

  // Landing: public figures and the models with prices.
  await page.goto(gw.url);
  await page.getByRole('cell', { name: '−20%' }).first().waitFor();
  t.ok(await page.getByText('oa-model', { exact: true }).isVisible(), 'the model list');
  t.match(await page.locator('.figures').first().innerText(), /models\s+3\b/, 'public stats');
  await shoot('landing');

  // Sign up: a bad email is worded by the page under the field, and goes once it is edited.
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.waitForURL('**/signup');
  const badEmail = await api('POST', '/register', { body: { email: 'not-an-email' } });
  t.match(badEmail.json.error, { param: 'email', reason: 'invalid_email' });
  await page.getByLabel('Email address').fill('not-an-email');
  await page.getByRole('button', { name: 'Send me the link' }).click();
  t.equal(
    await page.locator('#email-error').innerText(),
    'Enter an email address, like name@example.com.',
    'bad email: worded under the field',
  );
  t.equal(await page.getByLabel('Email address').getAttribute('aria-invalid'), 'true', 'the field is marked invalid');
  await shoot('signup');
  await page.getByLabel('Email address').fill('not-an-email-yet');
  t.equal(await page.locator('#email-error').count(), 0, 'the error goes once the field is edited');
  const email = newEmail();
  await page.getByLabel('Email address').fill(email);
  await page.getByRole('button', { name: 'Send me the link' }).click();
  await page.getByText(`we sent a link to ${email}`).waitFor();

  // The link from the mail opens the page where the password is set.
  const { link, token } = verifyLinkToken((await s.sink.take(email)).raw);
  t.ok(link.startsWith(`${gw.url}/verify?token=`), 'the mailed link points at the dashboard');
  await page.goto(link);
  const shortPassword = await api('POST', '/verify', { body: { token: 'x'.repeat(43), password: 'short' } });
  await page.getByLabel('New password').fill('short');
  await page.getByLabel('Repeat the password').fill('short');
  await page.getByRole('button', { name: 'Set password and continue' }).click();
  t.match(shortPassword.json.error, { param: 'password', reason: 'too_short', params: { min: 8 } });
  t.equal(
    await page.locator('#password-error').innerText(),
    'Use at least 8 characters.',
    'short password: worded under the field with its figure',
  );
  await shoot('verify');
  await page.getByLabel('Repeat the password').fill('shorter');
  t.equal(await page.locator('#password-error').count(), 0, 'cleared on edit');
  await page.getByRole('button', { name: 'Set password and continue' }).click();
  t.equal(
    await page.locator('#confirm-error').innerText(),
    'The two passwords are not the same.',
    'a mismatch under the second field',
  );
  const password = 'a browser-chosen password';
  await page.getByLabel('New password').fill(password);
  await page.getByLabel('Repeat the password').fill(password);
  await page.getByRole('button', { name: 'Set password and continue' }).click();
  await page.waitForURL('**/overview');
  const session = await sessionOf(page);
  t.match(session, /^ars_/, 'the session is kept in localStorage');
  t.equal((await api('POST', '/verify', { body: { token, password } })).status, 400, 'the link was used up');
  await page.getByTestId('balance').waitFor();
  t.equal(await page.getByTestId('balance').innerText(), '$0.00', 'a new account starts empty');
  // At $0 the overview says what to do: here, top up (this gateway takes QRIS and USDT).
  await page.getByTestId('onboarding').getByText('Your balance is empty: add credit to make requests.').waitFor();
  t.equal(
    await page.getByTestId('onboarding').getByRole('link', { name: 'Top up' }).getAttribute('href'),
    '/topup',
    'the way forward: top up',
  );
  await shoot('overview-new');

  // A key, shown once.
  await nav('Keys');
  await page.getByLabel('Key name (optional)').fill('browser');
  await page.getByRole('button', { name: 'Create key' }).click();
  const key = await page.getByTestId('new-key').innerText();
  t.match(key, /^ar-[0-9A-Za-z]{40}$/, 'the new key is shown');
  await page.getByRole('button', { name: 'Copy', exact: true }).click();
  await page.getByRole('button', { name: 'Copied', exact: true }).waitFor();

  // Copy-ready snippets with the new key: the OpenAI SDK on /v1, the Anthropic SDK on the root,
  // Claude Code and Codex.
  const snippet = () => page.getByTestId('snippet').first().innerText();
  t.match(await snippet(), `baseURL: '${gw.url}/v1', apiKey: '${key}'`, 'OpenAI SDK: base URL with /v1, the key');
  const tab = (name: string) => page.locator('.newkey').getByRole('tab', { name, exact: true }).click();
  await tab('Anthropic SDK');
  t.match(await snippet(), `baseURL: '${gw.url}', apiKey: '${key}'`, 'Anthropic SDK: base URL without /v1');
  await tab('Claude Code');
  t.match(
    await snippet(),
    `ANTHROPIC_BASE_URL=${gw.url} ANTHROPIC_API_KEY=${key} ANTHROPIC_MODEL=oa-model claude`,
    'Claude Code',
  );
  await tab('Codex');
  t.match(await snippet(), `base_url = "${gw.url}/v1"`, 'Codex: its provider on /v1');
  await shoot('keys');

  // Limits: the API's rules worded next to the fields (in Indonesian here), then a key with
  // 60 requests a minute and $5 a day.
  await page.getByLabel('Language').selectOption('id');
  await page.getByLabel('Nama kunci (opsional)').fill('limited');
  await page.getByLabel('Permintaan per menit (opsional)').fill('60');
  await page.getByLabel('Batas pengeluaran dalam USD (opsional)').fill('5');
  await page.getByRole('button', { name: 'Buat kunci' }).click();
  t.equal(
    await page.locator('#new-period-error').innerText(),
    'Pilih periode untuk batas pengeluaran.',
    'a cap without its period, in Indonesian under the period',
  );
  await shoot('keys-limits-id');
  await page.getByLabel('Periode batas').selectOption('day');
  t.equal(await page.locator('#new-period-error').count(), 0, 'cleared once a period is picked');
  await page.getByLabel('Bahasa').selectOption('en');
  await page.getByRole('button', { name: 'Create key' }).click();
  const limitedRow = page.getByTestId('keys-table').locator('tr', { hasText: 'limited' });
  await limitedRow.waitFor();
  t.match(await limitedRow.innerText(), '60/min · $5.00 a day', 'the limits in the list');
  const limitedKey = () =>
    api('GET', '/keys', { token: session! }).then((r) =>
      r.json.data.find((k: { name: string }) => k.name === 'limited'),
    );
  t.match(
    await limitedKey(),
    { rpm_limit: 60, spend_limit_usd: '5.000000000', spend_limit_period: 'day' },
    'as the API keeps them',
  );
  await limitedRow.getByRole('button', { name: 'Edit' }).click();
  await page.getByLabel('Requests per minute (optional)').last().fill('');
  await page.getByLabel('Spending cap in USD (optional)').last().fill('2.5');
  await page.getByLabel('Cap period').last().selectOption('week');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByTestId('keys-table').getByText('$2.50 a week').waitFor();
  t.match(
    await limitedKey(),
    { rpm_limit: null, spend_limit_usd: '2.500000000', spend_limit_period: 'week' },
    'edited: no rpm limit, $2.50 a week',
  );

  // A name at the API's bound (100 characters) wraps inside its column.
  const longName = 'n'.repeat(100);
  await page.getByLabel('Key name (optional)').fill(`${longName}extra`);
  t.equal((await page.getByLabel('Key name (optional)').inputValue()).length, 100, 'the field stops at 100 characters');
  await page.getByRole('button', { name: 'Create key' }).click();
  const longCell = page.getByTestId('keys-table').locator('th.keyname', { hasText: longName });
  await longCell.waitFor();
  const longWidth = (await longCell.boundingBox())!.width;
  t.ok(longWidth <= 16 * 16 + 32, `the long name is held to its column (${longWidth}px)`);
  await page.setViewportSize(SIZES.phone);
  t.ok(
    await page
      .getByTestId('keys-table')
      .locator('tr', { hasText: 'browser' })
      .getByRole('button', { name: 'Revoke' })
      .isVisible(),
    'Revoke is reachable on a phone',
  );
  await shoot('keys-long-name');

  // Some credit from the operator (as `airouter user credit` gives), then requests with the key.
  const [{ id: userId }] = await gw.services.sql<{ id: string }[]>`SELECT id FROM users WHERE email = ${email}`;
  await creditUser(gw.services.sql, gw.services.hot, userId, 1_000_000_000n, {
    method: 'operator',
    amount: '1',
    currency: 'USD',
  });
  t.equal(await chat(gw.url, key), 200, 'a chat completion with the new key');
  t.equal(await chat(gw.url, key), 200, 'and another');
  const logged: { id: string; prompt_tokens: number; completion_tokens: number }[] = await eventually(async () => {
    const data = (await api('GET', '/usage?range=24h', { token: session! })).json.data;
    return data.length === 2 ? data : undefined;
  }, 5000);
  t.ok(logged, 'the requests reached the usage log');

  await nav('Usage');
  const row = page.getByTestId('usage-table').locator('tbody tr');
  // The key's name comes from the key list, loaded beside the log.
  await row.first().getByText('browser').waitFor();
  t.equal(await row.count(), 2, 'both requests in the log');
  const newest = (await api('GET', '/usage?range=24h&limit=1', { token: session! })).json.data[0];
  t.match(newest.cost_usd, /^0\.0000\d{5}$/, 'a cost below a cent, with nano-dollar digits');
  t.match(
    await row.first().innerText(),
    new RegExp(
      `oa-model\\s+browser\\s+Chat completions\\s+200\\s+\\d+\\s+${newest.cached_tokens}\\s+\\d+\\s+${shownUsd(newest.cost_usd).replace('$', '\\$')}\\s+\\d+ ms\\s+${newest.request_id}`,
    ),
    `model, key name, surface, status, tokens with cached, the exact cost (${shownUsd(newest.cost_usd)}), latency, request id`,
  );
  const jakarta = new Intl.DateTimeFormat('en-US', {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
    timeZone: 'Asia/Jakarta',
  });
  t.equal(
    await row.first().locator('time').innerText(),
    jakarta.format(new Date(newest.created_at)),
    "the time to the second, in the browser's time zone",
  );
  t.equal(await page.getByLabel('Period').inputValue(), '30d', 'the same default period as the overview');
  // Filters by key and status, and the filtered log as CSV.
  await page.locator('#key').selectOption({ label: 'browser' });
  await row.first().waitFor();
  t.equal(await row.count(), 2, 'the key filter keeps its requests');
  await page.locator('#status').selectOption('error');
  await page.getByText('Nothing here yet.').waitFor();
  t.pass('no refused requests');
  await page.locator('#status').selectOption('ok');
  await row.first().waitFor();
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download CSV' }).click();
  const file = await download;
  t.match(file.suggestedFilename(), /^usage-\d{4}-\d{2}-\d{2}\.csv$/, 'a CSV file');
  const csvLines = readFileSync((await file.path())!, 'utf8')
    .trim()
    .split('\r\n');
  t.equal(csvLines.length, 3, 'a header and both requests');
  t.ok(
    csvLines
      .slice(1)
      .some((l) => l.includes(newest.request_id) && l.includes(newest.cost_usd) && l.includes(',browser,')),
    'with the request id, the exact cost and the key name',
  );
  await page.locator('#status').selectOption('');
  await page.locator('#key').selectOption('');
  await page.getByLabel('Model').selectOption('an-model');
  await page.getByText('Nothing here yet.').waitFor();
  t.pass('the model filter narrows the log');
  await page.getByLabel('Model').selectOption('oa-model');
  await row.first().waitFor();
  await shoot('usage');

  // One row a page: the cursor leads to the older request and back.
  await page.goto(`${gw.url}/usage?limit=1`);
  const rowIds = () => page.getByTestId('usage-table').locator('tbody tr').getAttribute('data-id');
  await row.first().waitFor();
  t.equal(await rowIds(), logged[0].id, 'page 1: the newest');
  t.ok(await page.getByRole('button', { name: 'Previous page' }).isDisabled());
  await page.getByRole('button', { name: 'Next page' }).click();
  await page.locator(`tr[data-id="${logged[1].id}"]`).waitFor();
  t.equal(await row.count(), 1, 'page 2: the older one');
  t.ok(await page.getByRole('button', { name: 'Next page' }).isDisabled(), 'no page 3');
  await page.getByRole('button', { name: 'Previous page' }).click();
  await page.locator(`tr[data-id="${logged[0].id}"]`).waitFor();
  t.pass('back to page 1');

  // On a phone: the table scrolls inside its region, says so, and the keyboard scrolls it.
  await page.setViewportSize(SIZES.phone);
  await page.getByTestId('scroll-hint').waitFor();
  t.equal(
    await page.getByTestId('scroll-hint').innerText(),
    'The table is wider than the screen: swipe it sideways, or focus it and use the arrow keys.',
    'a visible cue that the table scrolls',
  );
  const region = page.getByRole('region', { name: 'Usage' });
  t.match(await region.getAttribute('class'), /more-right/, 'a shadow on the edge where it goes on');
  await region.focus();
  for (let i = 0; i < 8; i++) await page.keyboard.press('ArrowRight');
  // The browser scrolls smoothly, so the offset is waited for (a loaded machine is slower at it).
  const scrolled = await page
    .waitForFunction((e) => (e as unknown as { scrollLeft: number }).scrollLeft > 0, await region.elementHandle(), {
      timeout: 5000,
    })
    .then(
      () => true,
      () => false,
    );
  t.ok(scrolled, 'the arrow keys scroll it');
  await page.waitForFunction(() =>
    (document.querySelector('.scroll') as unknown as { className: string }).className.includes('more-left'),
  );
  t.pass('then the shadow shows on the left too');

  // On a phone, in both languages: every page's link is in sight and opens its page.
  const phoneNav: [string, [string, string][]][] = [
    [
      'en',
      [
        ['Overview', 'Overview'],
        ['Keys', 'API keys'],
        ['Usage', 'Usage'],
        ['Playground', 'Playground'],
        ['Models', 'Models'],
        ['Top up', 'Top up'],
        ['Deposits', 'Deposits'],
        ['Account', 'Account'],
      ],
    ],
    [
      'id',
      [
        ['Ringkasan', 'Ringkasan'],
        ['Kunci', 'Kunci API'],
        ['Pemakaian', 'Pemakaian'],
        ['Coba model', 'Coba model'],
        ['Model', 'Model'],
        ['Isi saldo', 'Isi saldo'],
        ['Deposit', 'Deposit'],
        ['Akun', 'Akun'],
      ],
    ],
  ];
  for (const [lang, links] of phoneNav) {
    await page.locator('.lang select').selectOption(lang);
    for (const [link, heading] of links) {
      const a = page.getByRole('navigation').getByRole('link', { name: link, exact: true });
      const box = (await a.boundingBox())!;
      t.ok(
        box.x >= 0 && box.x + box.width <= SIZES.phone.width && box.y + box.height <= SIZES.phone.height,
        `${lang} phone: "${link}" is in sight without scrolling the bar`,
      );
      await a.click();
      await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
      t.equal(await a.getAttribute('aria-current'), 'page', `${lang} phone: "${link}" opens ${heading}`);
    }
  }
  await shoot('nav-phone-id');
  await page.locator('.lang select').selectOption('en');
  await page.setViewportSize(SIZES.desktop);
  await nav('Usage');
  await row.first().waitFor();
  // A refused request (an unknown model) is in the log at $0 with its code; the overview below
  // still counts the two answered ones.
  const refusedRes = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'no-such-model', max_tokens: 20, messages: [{ role: 'user', content: 'Hello' }] }),
  });
  await refusedRes.body.text();
  t.equal(refusedRes.statusCode, 404);
  await gw.services.refusals.flush();
  await page.locator('#status').selectOption('refused');
  const refusedRow = page
    .getByTestId('usage-table')
    .locator('tr', { hasText: String(refusedRes.headers['x-request-id']) });
  await refusedRow.waitFor();
  t.match(
    await refusedRow.innerText(),
    /no-such-model\s+browser\s+Chat completions\s+404 Unknown model\s+0\s+0\s+0\s+\$0\.00\s+\d+ ms/,
    'the refused request: the model it named, its status and its code in words, no tokens, $0',
  );
  await page.locator('#status').selectOption('');

  await nav('Overview');
  await page.getByTestId('requests').waitFor();
  t.equal(await page.getByTestId('requests').innerText(), '2', 'the requests counted');
  t.equal(await page.getByTestId('onboarding').count(), 0, 'funded and used: no getting-started steps');
  t.equal(
    await page.getByTestId('tokens').innerText(),
    String(logged.reduce((n, r) => n + r.prompt_tokens + r.completion_tokens, 0)),
  );
  await page.locator('.chart canvas').waitFor();
  const chartPng = await page.locator('.chart canvas').screenshot();
  t.ok(pictureStats(chartPng).stdev > 5, 'the chart is drawn');
  const bars = await page.evaluate(() => {
    const c = document.querySelector('.chart canvas') as PageCanvas;
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    let green = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && d[i + 1] > d[i] + 40 && d[i + 1] > d[i + 2]) green++;
    return green;
  });
  t.ok(bars > 20, `today's spend is a bar on the chart (${bars} bar pixels)`);
  await shoot('overview');
  // The last bar is drawn whole: a gap of background between it and the plot's right edge (a
  // clipped bar ends exactly at the edge).
  const lastBar = await page.evaluate(() => {
    const c = document.querySelector('.chart canvas') as PageCanvas;
    const over = document.querySelector('.chart .u-over') as unknown as {
      offsetLeft: number;
      offsetTop: number;
      offsetWidth: number;
      offsetHeight: number;
    };
    const ratio = c.width / (document.querySelector('.chart canvas') as unknown as { clientWidth: number }).clientWidth;
    const y = Math.round((over.offsetTop + over.offsetHeight - 3) * ratio);
    const row = c.getContext('2d')!.getImageData(0, y, c.width, 1).data;
    let right = -1;
    for (let x = 0; x < c.width; x++)
      if (row[x * 4 + 3] > 0 && row[x * 4 + 1] > row[x * 4] + 40 && row[x * 4 + 1] > row[x * 4 + 2]) right = x;
    return { right: right / ratio, edge: over.offsetLeft + over.offsetWidth };
  });
  t.ok(
    lastBar.right > 0 && lastBar.right < lastBar.edge - 4,
    `the last bar ends before the plot's edge (${lastBar.right.toFixed(0)} < ${lastBar.edge})`,
  );
  t.equal(await page.locator('.u-legend').count(), 0, 'no chart library legend (it only speaks English)');
  t.equal(await page.getByTestId('chart-legend').innerText(), 'Spent (USD)\nTokens', 'the legend, in English');
  // In Indonesian: the exact balance, the legend, and figures inside their cards at a phone's width.
  const balanceNow = (await api('GET', '/balance', { token: session! })).json.balance_usd;
  await page.getByLabel('Language').selectOption('id');
  await page.getByTestId('chart-legend').getByText('Terpakai (USD)').waitFor();
  t.equal(
    await page.getByTestId('balance').innerText(),
    shownUsdId(balanceNow),
    `the balance in Indonesian, in format.ts's form (${balanceNow})`,
  );
  t.equal(
    await page.getByTestId('header-balance').innerText(),
    `Saldo: ${shownUsdId(balanceNow)}`,
    'the header, the same',
  );
  t.equal(await page.getByTestId('chart-legend').innerText(), 'Terpakai (USD)\nToken', 'the legend in Indonesian');
  await page.setViewportSize(SIZES.phone);
  await page.waitForTimeout(150);
  const overflowing = await page.evaluate(() =>
    [...document.querySelectorAll('.figures dd')]
      .filter((e) => {
        const d = e as unknown as { scrollWidth: number; clientWidth: number };
        return d.scrollWidth > d.clientWidth + 1;
      })
      .map((e) => e.outerHTML),
  );
  t.same(overflowing, [], 'no figure overflows its card on a phone');
  await shoot('overview-id');
  await page.getByLabel('Bahasa').selectOption('en');

  // The playground: a catalogue model, a prompt, the answer streaming in, then its cost, read
  // back from the usage log, where the request is listed under the playground.
  await nav('Playground');
  await page.getByLabel('Model').selectOption('oa-model');
  await page.getByLabel('Prompt').fill('Say hello');
  const streamed = page.waitForResponse((r) => r.url().endsWith('/api/dashboard/playground'));
  await page.getByRole('button', { name: 'Send' }).click();
  const playResponse = await streamed;
  t.match(playResponse.headers()['content-type'], /^text\/event-stream/, 'the answer comes as a stream');
  const playId = playResponse.headers()['x-request-id'];
  await page.getByTestId('play-cost').waitFor();
  const answerText = await page.getByTestId('play-answer').innerText();
  t.ok(
    answerText.length > 0 && answerText !== 'Loading…',
    `the streamed answer is shown (${JSON.stringify(answerText.slice(0, 40))})`,
  );
  t.match(await page.getByTestId('play-tokens').innerText(), /^Tokens: \d+ in, \d+ out\.$/, 'its tokens');
  const playRecord = (await api('GET', '/usage?range=24h', { token: session! })).json.data.find(
    (r: { request_id: string }) => r.request_id === playId,
  );
  t.ok(playRecord, 'the playground request is in the usage log');
  t.equal(
    await page.getByTestId('play-cost').innerText(),
    `Cost: ${shownUsd(playRecord.cost_usd)}. Request ${playId}`,
    'its exact cost, from the log',
  );
  await shoot('playground');
  await page.getByLabel('Language').selectOption('id');
  t.equal(
    await page.getByTestId('play-cost').innerText(),
    `Biaya: ${shownUsdId(playRecord.cost_usd)}. Permintaan ${playId}`,
    'in Indonesian: the exact cost with a decimal comma',
  );
  await shoot('playground-id');
  await page.getByLabel('Bahasa').selectOption('en');
  await nav('Usage');
  // The rows and the key list load side by side: the key is named once both are in.
  const playRow = page.getByTestId('usage-table').locator('tr', { hasText: playId }).filter({ hasText: 'Playground' });
  await playRow.waitFor();
  t.match(
    await playRow.innerText(),
    new RegExp(
      `oa-model\\s+Playground\\s+Chat completions · stream\\s+200[\\s\\S]*${shownUsd(playRecord.cost_usd).replace('$', '\\$')}`,
    ),
    'in the usage log: the playground, streamed, its cost',
  );

  await nav('Models');
  await page.locator('tbody tr').first().waitFor();
  t.equal(await page.locator('tbody tr').count(), 3, 'the catalogue');
  await shoot('catalogue');

  // Top up by QRIS: an amount under the minimum is worded in Indonesian under the amount field
  // with the limits in rupiah, at both sizes; then a QR code.
  await nav('Top up');
  await page.getByLabel('QRIS (IDR)').check();
  const tooSmall = await api('POST', '/topup/qris', { token: session!, body: { amount_idr: '5000' } });
  t.equal(tooSmall.status, 400);
  t.match(tooSmall.json.error, { code: 'amount_out_of_range', param: 'amount_idr', reason: 'too_small' });
  await page.getByLabel('Language').selectOption('id');
  await page.getByLabel('Jumlah dalam rupiah').fill('5000');
  await page.getByRole('button', { name: 'Tampilkan kode QR' }).click();
  const rupiah = (v: string) =>
    new Intl.NumberFormat('id-ID', { style: 'currency', currency: 'IDR', maximumFractionDigits: 0 }).format(Number(v));
  const { min, max } = tooSmall.json.error.params;
  t.equal(
    await page.locator('#amount-error').innerText(),
    `Masukkan jumlah dari ${rupiah(min)} sampai ${rupiah(max)}.`,
    'the refusal in Indonesian, under the amount',
  );
  t.equal(
    await page.getByLabel('Jumlah dalam rupiah').getAttribute('aria-describedby'),
    'amount-hint amount-error',
    'read out with the field',
  );
  await shoot('topup-error-id');
  await page.getByLabel('Jumlah dalam rupiah').fill('50000');
  t.equal(await page.locator('#amount-error').count(), 0, 'fixed: the error is gone');
  await page.getByLabel('Bahasa').selectOption('en');
  // 50,000 / 16,250 = 3.0769…: an estimate is rounded down, never promising more than it buys.
  t.equal(
    await page.getByText('Buys about').innerText(),
    'Buys about $3.07 of credit.',
    'the credit it buys, while typing, rounded down',
  );
  await page.getByRole('button', { name: 'Show QR code' }).click();
  await page.waitForURL('**/topup?deposit=*');
  const depositId = new URL(page.url()).searchParams.get('deposit')!;
  const invoice = (await api('GET', `/deposits/${depositId}`, { token: session! })).json;
  const qrSrc = await page.getByRole('img', { name: /QRIS code to pay/ }).getAttribute('src');
  t.equal(decodeQrPng(qrSrc!), invoice.qr_string, 'the QR image on the page decodes to the invoice');
  t.equal(
    await page.getByTestId('pay-amount').innerText(),
    `IDR ${Number(invoice.amount).toLocaleString('en-US')}`.replace('IDR ', 'IDR\u00a0'),
    'the exact amount to pay',
  );
  t.match(await page.getByTestId('countdown').innerText(), /^1[45]:\d\d$/, 'a countdown to expiry');
  t.equal(await page.getByTestId('deposit-status').innerText(), 'Pending');
  const c1 = await page.getByTestId('countdown').innerText();
  await page.waitForTimeout(1100);
  t.not(await page.getByTestId('countdown').innerText(), c1, 'the countdown runs');
  await shoot('topup');

  // The merchant's watcher confirms the payment; the open page follows without a reload.
  await page.evaluate(() => (window.notReloaded = true));
  const before = (await api('GET', '/balance', { token: session! })).json.balance_usd;
  const note = JSON.stringify({
    deposit_id: depositId,
    amount_idr: Number(invoice.amount),
    reference: 'RRN-BROWSER-1',
  });
  const paid = await s.notify('qris', note, { 'x-signature': qrisSignature(note, QRIS_NOTIFY_SECRET) });
  t.equal(paid.status, 200, 'the notification is accepted');
  const after = (await api('GET', '/balance', { token: session! })).json.balance_usd;
  t.equal(usdToNano(after) - usdToNano(before), usdToNano(invoice.credit_usd), 'credited');
  await page.getByTestId('deposit-status').getByText('Paid').waitFor();
  t.match(after, /^\d\.\d*[1-9]\d*$/, `a balance with digits past the cent (${after})`);
  t.equal(
    await page.getByTestId('deposit-message').innerText(),
    `Paid. Your balance is now ${shownUsd(after)}.`,
    'paid, with the exact new balance',
  );
  t.equal(
    await page.getByTestId('header-balance').innerText(),
    `Balance: ${shownUsd(after)}`,
    'the header follows (cut, never rounded up)',
  );
  t.ok(await page.evaluate(() => window.notReloaded), 'no reload happened');
  await shoot('topup-paid');

  await nav('Deposits');
  const dep = page.getByTestId('deposits-table').locator('tbody tr');
  await dep.first().waitFor();
  t.match(
    await dep.first().innerText(),
    new RegExp(
      `QRIS\\s+IDR\\s${Number(invoice.amount).toLocaleString('en-US')}\\s+${shownUsd(invoice.credit_usd).replace('$', '\\$')}\\s+Paid`,
    ),
    'the deposit in the history, its exact credit',
  );
  await shoot('deposits');

  // USDT/USDC: an amount, then the provider's hosted checkout page.
  await nav('Top up');
  await page.getByLabel('USDT / USDC').check();
  const tooLittle = await api('POST', '/deposit/epusdt/create', { token: session!, body: { amount_usd: '0.5' } });
  await page.getByLabel('Amount in USD').fill('0.5');
  await page.getByRole('button', { name: 'Continue to payment' }).click();
  t.equal(
    await page.locator('#amount-error').innerText(),
    `Enter an amount from ${usd2(tooLittle.json.error.params.min)} to ${usd2(tooLittle.json.error.params.max)}.`,
    'USD amount under the minimum, in dollars',
  );
  await page.getByLabel('Amount in USD').fill('5');
  await page.getByRole('button', { name: 'Continue to payment' }).click();
  await page.waitForURL(`${s.epusdt.url}/pay/checkout-counter/*`);
  t.match(await page.locator('body').innerText(), /Send 5(\.\d+)? USDT/, 'the hosted checkout page');
  await page.goBack();
  await page.waitForURL('**/topup?deposit=*');
  await page.getByRole('link', { name: 'Open the checkout page' }).waitFor();
  t.equal(await page.getByTestId('deposit-status').innerText(), 'Pending', 'back: the open USDT invoice');

  // Revoke, after being asked; the key is refused from then on.
  // Revoke, in a dialog that takes focus, closes with Escape and gives focus back.
  await nav('Keys');
  const revokeBrowser = page
    .getByTestId('keys-table')
    .locator('tr', { hasText: 'browser' })
    .getByRole('button', { name: 'Revoke' });
  await revokeBrowser.click();
  const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
  await dialog.getByText('Revoke browser? Requests with it will be refused.').waitFor();
  t.equal(
    await page.evaluate(
      () =>
        (
          document as unknown as { activeElement: { textContent: string; closest(s: string): unknown } }
        ).activeElement.closest('dialog') !== null,
    ),
    true,
    'the dialog takes focus',
  );
  t.equal(
    await page.evaluate(
      () => (document as unknown as { activeElement: { textContent: string } }).activeElement.textContent,
    ),
    'Cancel',
    'on its harmless button',
  );
  await shoot('keys-revoke');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  t.equal(
    await page.evaluate(
      () => (document as unknown as { activeElement: { textContent: string } }).activeElement.textContent,
    ),
    'Revoke',
    'Escape closes it, focus back on Revoke',
  );
  t.equal(await chat(gw.url, key), 200, 'cancelled: the key still works');
  await revokeBrowser.click();
  await dialog.getByRole('button', { name: 'Yes, revoke' }).click();
  await page
    .getByTestId('keys-table')
    .locator('tr', { hasText: 'browser' })
    .getByText('Revoked', { exact: true })
    .waitFor();
  t.ok(await eventually(async () => (await chat(gw.url, key)) === 401, 2000), 'the revoked key is refused');

  // Bahasa Indonesia, kept across a reload; a reload keeps the session too.
  await page.getByLabel('Language').selectOption('id');
  await page.getByRole('navigation').getByRole('link', { name: 'Ringkasan' }).waitFor();
  await page.waitForFunction(() => document.documentElement.lang === 'id');
  t.pass('the page says it is in Indonesian (html lang)');
  await page.reload();
  await page.getByRole('heading', { name: 'Kunci API' }).waitFor();
  t.pass('a reload stays logged in, in the chosen language');
  await shoot('keys-id');
  await page.getByLabel('Bahasa').selectOption('en');

  // Log out drops the session; private pages then ask to log in.
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.waitForURL(`${gw.url}/`);
  t.equal(await sessionOf(page), null, 'logout drops the session');
  await page.goto(`${gw.url}/usage`);
  await page.waitForURL('**/login?next=%2Fusage');
  await page.getByLabel('Email address').fill(email);
  await page.getByLabel('Password').fill('wrong password');
  await page.getByRole('button', { name: 'Log in' }).click();
  t.equal(await alertText(), 'Wrong email or password.', 'a wrong password, worded by the page');
  await shoot('login');
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL('**/usage');
  await page.getByTestId('usage-table').getByText('browser').first().waitFor();
  t.pass('logged in again, back where it was going');
  // Every call of that page (log, key names, model list, balance) answered before the session
  // is ended behind its back.
  await page.locator('#model option', { hasText: 'oa-model' }).waitFor({ state: 'attached' });
  await page.getByTestId('header-balance').waitFor();

  // A session ended elsewhere: the next call gets 401, the page drops the token and says so.
  const current = await sessionOf(page);
  t.equal((await api('POST', '/logout', { token: current! })).status, 204);
  // The deposits page and the header's balance both go out on the dead session; both get 401.
  const refused = (path: string) =>
    page.waitForResponse((r) => r.url().includes(`/api/dashboard${path}`) && r.status() === 401);
  const bothRefused = Promise.all([refused('/deposits'), refused('/balance')]);
  await nav('Deposits');
  await bothRefused;
  await page.getByText('Your session has ended. Please log in again.').waitFor();
  // Let the later 401's handler run too: it must not send the login page to itself.
  await page.evaluate(() => new Promise((done) => setTimeout(done, 200)));
  t.equal(
    new URL(page.url()).pathname + new URL(page.url()).search,
    '/login?next=%2Fdeposits',
    'two 401s end the session once',
  );
  t.equal(await sessionOf(page), null, 'a 401 drops the session');

  t.same(problems, [], 'no script errors and no content-security refusals');
});
