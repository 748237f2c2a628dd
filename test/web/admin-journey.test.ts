// The admin pages in a real browser (Debian's Chromium through playwright-core) against a real
// gateway: an admin finds a user and credits them, confirms a deposit, makes codes, switches a
// model off, reads health, revenue, the audit log and the request log; a user redeems a code and sees the
// low-balance banner; a user's session is refused the admin pages. Every page photographed at
// phone and desktop sizes (.tap/screenshots/admin-*), checked to fit a phone and show something.
// A file of its own beside journey.test.ts, which another session is extending at the same time.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { setAdmin } from '../../src/admin/accounts.js';
import { createKey } from '../../src/accounts/keys.js';
import { buildWeb } from '../../web/build.js';
import { launchBrowser, openPage, shooter, SKIP_WITHOUT_CHROMIUM, sessionOf } from '../helpers/browser.js';
import { waitFor } from '../helpers/child.js';
import { signUp, startDashboard } from '../helpers/dashboard.js';

t.test('the admin pages in Chromium', { skip: SKIP_WITHOUT_CHROMIUM }, async (t) => {
  const webDir = path.join(mkdtempSync(path.join(tmpdir(), 'airouter-web-')), 'dist');
  await buildWeb(webDir);
  const s = await startDashboard(t, {
    WEB_DIR: webDir,
    ALERT_CHECK_MS: '200',
    PROVIDER_KEY_SECRET: 'the journey test provider key secret, 32+ chars',
  });
  const sql = s.gw.services.sql;
  const root = await signUp(s, 'admin password 123');
  await setAdmin(sql, { id: null, label: 'test setup' }, root.userId, true);
  const user = await signUp(s, 'user password 123');
  await sql`INSERT INTO deposits (user_id, method, status, amount, currency, credit_nano, provider, expires_at)
            VALUES (${user.userId}, 'qris', 'pending', 32500, 'IDR', 2000000000, 'qris', now() + interval '1 hour')`;

  const browser = await launchBrowser(t);
  // UTC: the revenue's days and the request log's times are compared as the API gives them.
  const { page, problems } = await openPage(browser, { timezoneId: 'UTC' });
  const shoot = shooter(t, page, 'admin-');
  const login = async (email: string, password: string) => {
    await page.goto(`${s.gw.url}/login`);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL('**/overview');
  };
  const sub = (name: string) =>
    page.getByRole('navigation', { name: 'Admin menu' }).getByRole('link', { name, exact: true }).click();

  // Users: find, credit with a reason.
  await login(root.email, 'admin password 123');
  await page.getByTestId('nav-admin').click();
  await page.waitForURL('**/admin');
  await page.getByLabel('Search by email').fill(user.email.slice(0, 10));
  await page.getByLabel('Search by email').press('Enter');
  await page.getByTestId('admin-users').getByRole('link', { name: user.email }).click();
  await page.getByTestId('admin-balance').waitFor();
  await page.getByLabel('Amount (USD)').fill('2.5');
  await page.getByLabel('Reason').fill('welcome credit');
  await page.getByRole('button', { name: 'Credit', exact: true }).click();
  await page.getByText('Done. Balance: $2.50').waitFor();
  await page.getByTestId('admin-adjustments').getByText('welcome credit').waitFor();
  t.pass('credited with a reason, shown in the adjustments');
  await shoot('users');

  // Deposits: confirm the pending one by hand.
  await sub('Deposits');
  await page.getByTestId('admin-deposits').getByRole('button', { name: 'Open' }).click();
  await page.getByTestId('admin-deposits').getByLabel('Reason').fill('seen in the bank statement');
  await page.getByRole('button', { name: 'Confirm paid' }).click();
  await page.getByTestId('admin-deposits').getByText('Paid', { exact: true }).waitFor();
  t.equal(
    (await s.api('GET', '/balance', { token: user.session })).json.balance_usd,
    '4.500000000',
    'the confirmed deposit is credited',
  );
  await shoot('deposits');

  // Codes: made, shown once.
  await sub('Codes');
  await page.getByLabel('How many').fill('2');
  await page.getByLabel('Amount (USD)').fill('1.25');
  await page.getByRole('button', { name: 'Make codes' }).click();
  const codes = (await page.getByTestId('new-codes').innerText()).trim().split('\n');
  t.equal(codes.length, 2, 'two codes shown');
  await shoot('codes');

  // Catalogue: switch a model off, in force at once.
  await sub('Catalogue');
  const row = page.getByTestId('admin-catalogue').getByRole('row').filter({ hasText: 'an-model' });
  await row.getByRole('button', { name: 'Switch off', exact: true }).last().click();
  await page
    .getByTestId('catalogue-version')
    .getByText(/version \d+/)
    .waitFor();
  const listed = (await (await fetch(`${s.gw.url}/api/public/models`)).json()) as { data: { id: string }[] };
  t.notOk(
    listed.data.some((m) => m.id === 'an-model'),
    'the switched-off model is out of the live catalogue',
  );
  // The fallback model's second route first.
  const fallback = page.getByTestId('admin-catalogue').getByRole('row').filter({ hasText: 'fallback-model' });
  await fallback.getByRole('button', { name: 'Move up' }).click();
  await page
    .getByTestId('catalogue-version')
    .getByText(/version 2,/)
    .waitFor();
  const state = (await (
    await fetch(`${s.gw.url}/api/admin/catalogue`, {
      headers: { authorization: `Bearer ${await sessionOf(page)}` },
    })
  ).json()) as { in_service: { id: string; routes: string[] }[] };
  t.same(
    state.in_service.find((m) => m.id === 'fallback-model')?.routes,
    ['fake-openai/upstream-oa', 'dead/x'],
    'routes reordered from the page',
  );
  // A price and the upstream's cost, from the page.
  const oa = page.getByTestId('admin-catalogue').getByRole('row').filter({ hasText: 'oa-model' }).first();
  await oa.getByText('Prices, USD per million tokens').click();
  await oa.getByLabel('Input', { exact: true }).fill('1.5');
  await oa.getByRole('button', { name: 'Save prices' }).click();
  await page
    .getByTestId('catalogue-version')
    .getByText(/version 3,/)
    .waitFor();
  const priced = (await (await fetch(`${s.gw.url}/api/public/models`)).json()) as {
    data: { id: string; pricing: { input: number } }[];
  };
  t.equal(priced.data.find((m) => m.id === 'oa-model')?.pricing.input, 1.5, 'the new price is in force');
  // The upstream's cost on the route, from the routes form.
  await oa.getByText('Routes', { exact: true }).click();
  await oa.getByLabel('Upstream cost, input').fill('0.75');
  await oa.getByLabel('Upstream cost, output').fill('1');
  await oa.getByRole('button', { name: 'Save the routes' }).click();
  await page
    .getByTestId('catalogue-version')
    .getByText(/version 4,/)
    .waitFor();
  await page.getByTestId('catalogue-file-differs').waitFor();
  t.pass('the page says the file is no longer what serves');
  // A bad import says what is wrong, where; a good one says what it saved.
  const fileInput = page.locator('input[type=file]');
  await fileInput.setInputFiles({
    name: 'bad.json',
    mimeType: 'application/json',
    buffer: Buffer.from(
      JSON.stringify({
        providers: [],
        models: [{ id: 'x', pricing: { input: -1, output: 1 }, routes: [{ provider: 'p', model: 'm' }] }],
      }),
    ),
  });
  await page.locator('.actions > button', { hasText: 'Import JSON' }).click();
  await page.getByText(/Not saved: catalogue: models\[0\]\.pricing\.input must not be negative/).waitFor();
  t.pass('a bad import names the field at fault');
  const exported = await (
    await fetch(`${s.gw.url}/api/admin/catalogue/export`, {
      headers: { authorization: `Bearer ${await sessionOf(page)}` },
    })
  ).text();
  await fileInput.setInputFiles({ name: 'good.json', mimeType: 'application/json', buffer: Buffer.from(exported) });
  await page.locator('.actions > button', { hasText: 'Import JSON' }).click();
  await page
    .getByTestId('catalogue-saved')
    .getByText(/Saved as version 5: 2 models in service\./)
    .waitFor();
  t.pass('a good import says what it saved');
  await shoot('catalogue');

  // Providers: add one, save its key (shown by its last four characters), test it, route a new model to it.
  await sub('Providers');
  const form = page.getByTestId('new-provider');
  await form.getByText('Add a provider', { exact: true }).first().click();
  await form.getByLabel('Provider name').fill('console-oa');
  await form.getByLabel('Base URL').fill(`${s.up.url}/v1`);
  await form.getByRole('button', { name: 'Add a provider', exact: true }).click();
  await page.getByText('Provider console-oa added.', { exact: false }).waitFor();
  const card = page.getByTestId('provider-console-oa');
  await card.getByText('Save an API key', { exact: true }).click();
  await card.getByLabel('API key', { exact: true }).fill('sk-journey-console-key-9876');
  await card.getByRole('button', { name: 'Save the key' }).click();
  await card.getByText('…9876').waitFor();
  t.equal(await page.getByText('sk-journey-console-key-9876').count(), 0, 'the key is not shown again');
  await card.getByRole('button', { name: 'Test with one call' }).click();
  await card.getByText(/No model is routed to provider "console-oa"/).waitFor();
  t.pass('a provider with no model yet: the test says what it needs');
  await sub('Catalogue');
  await page.getByTestId('new-model').getByText('Add a model', { exact: true }).first().click();
  await page.getByLabel('Model name (as clients send it)').fill('console-model');
  await page.getByTestId('new-model').getByLabel('Input', { exact: true }).fill('2');
  await page.getByTestId('new-model').getByLabel('Output', { exact: true }).fill('4');
  await page.getByTestId('new-model').getByLabel('Provider').selectOption('console-oa');
  await page.getByTestId('new-model').getByLabel('Upstream model name').fill('upstream-console');
  await page.getByTestId('new-model').getByRole('button', { name: 'Add a model' }).click();
  await page.getByTestId('catalogue-saved').waitFor();
  const models = (await (await fetch(`${s.gw.url}/api/public/models`)).json()) as { data: { id: string }[] };
  t.ok(
    models.data.some((m) => m.id === 'console-model'),
    'the model added in the console is in the live catalogue',
  );
  await sub('Providers');
  await card.getByRole('button', { name: 'Test with one call' }).click();
  await card
    .getByTestId('provider-console-oa-test')
    .getByText(/answered in \d+ ms \(upstream-console\)/)
    .waitFor();
  t.pass('the test call answered, through the model routed to the provider');
  await shoot('providers');

  for (const [name, testId] of [
    ['Upstream health', 'admin-health'],
    ['Revenue', 'admin-revenue'],
    ['Audit log', 'admin-audit'],
  ] as const) {
    await sub(name);
    await page.getByTestId(testId).waitFor();
    await shoot(testId.replace('admin-', ''));
  }
  await page.getByTestId('admin-audit').getByText('Balance credited').waitFor();
  t.pass('the audit log shows the credit, in words');

  // The request log: a user's request, found by its model, with the route that answered.
  const { key } = await createKey(sql, user.userId, 'journey');
  const answered = await fetch(`${s.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fallback-model', messages: [{ role: 'user', content: 'hello' }] }),
  });
  t.equal(answered.status, 200, await answered.text());
  await waitFor(
    async () => ((await sql`SELECT 1 FROM usage_records WHERE user_id = ${user.userId}`).length ? true : undefined),
    10_000,
    50,
  );
  await sub('Requests');
  await page.getByLabel('Model', { exact: true }).fill('fallback-model');
  await page.getByRole('button', { name: 'Filter', exact: true }).click();
  await page.getByTestId('admin-requests').getByText('fake-openai/upstream-oa').waitFor();
  t.equal(
    await page.getByTestId('admin-requests').locator('tbody tr').count(),
    1,
    'the one request of that model, with its route',
  );
  await shoot('requests');

  // Indonesian.
  await page.getByLabel('Language').selectOption('id');
  await page.getByRole('navigation', { name: 'Menu admin' }).getByRole('link', { name: 'Pengguna' }).waitFor();
  await shoot('audit-id');
  await page.getByLabel('Bahasa').selectOption('en');
  await page.getByRole('button', { name: 'Log out' }).click();

  // A user: no admin link, a refusal on the admin pages; redeems a code; sets an alert.
  await login(user.email, 'user password 123');
  t.equal(await page.getByTestId('nav-admin').count(), 0, 'no admin link for a user');
  await page.goto(`${s.gw.url}/admin/audit`);
  await page.getByText('This page is for admins.').waitFor();
  await page.goto(`${s.gw.url}/topup`);
  await page.getByLabel('Code').fill(codes[0].toLowerCase());
  await page.getByRole('button', { name: 'Redeem' }).click();
  await page.getByTestId('redeem-done').getByText('Credited $1.25.').waitFor();
  await page.getByLabel('Email me when the balance falls below (USD)').fill('100');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.goto(`${s.gw.url}/overview`);
  await page.getByTestId('low-balance-banner').waitFor();
  t.pass('a code redeemed; the banner is up below the threshold');
  await page.goto(`${s.gw.url}/topup`);
  await page.getByRole('heading', { name: 'Redeem a code' }).waitFor();
  await shoot('topup-user');
  await s.sink.take(user.email, 5000);
  t.pass('and the alert mail went out');

  t.same(problems, [], 'no script errors');
});
