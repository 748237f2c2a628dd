// The account in Chromium: a new account at $0 on a gateway that takes no payments is told to
// ask the operator; an unknown path gets the dashboard's own not-found page; a forgotten
// password is reset from a link mailed through the test SMTP server (on the address the
// gateway was reached at, without PUBLIC_URL), once; the password is changed (a wrong current
// one refused in Indonesian under its field); every session is signed out. At phone and
// desktop sizes (shoot), in English and Indonesian.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { buildWeb } from '../../web/build.js';
import { launchBrowser, openPage, shooter, SIZES, SKIP_WITHOUT_CHROMIUM, sessionOf } from '../helpers/browser.js';
import { mailText, signUp, startDashboard } from '../helpers/dashboard.js';

t.test('the account pages in Chromium', { skip: SKIP_WITHOUT_CHROMIUM }, async (t) => {
  const webDir = path.join(mkdtempSync(path.join(tmpdir(), 'airouter-web-')), 'dist');
  await buildWeb(webDir);
  // No PUBLIC_URL: mailed links must use the address the browser reached the gateway at.
  const s = await startDashboard(t, { WEB_DIR: webDir, PUBLIC_URL: '', LOGIN_MAX_ATTEMPTS: '1000' });
  const { api, gw } = s;
  const { email, password } = await signUp(s);
  const browser = await launchBrowser(t);
  const { page, problems } = await openPage(browser);
  const shoot = shooter(t, page);
  const alertText = () => page.locator('[role=alert]').first().innerText();

  // Log in; at $0 on a gateway that takes no payments, the overview says to ask the operator
  // (in Indonesian on a phone here) and offers no top-up link that leads nowhere.
  await page.goto(`${gw.url}/login`);
  await page.getByLabel('Email address').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL('**/overview');
  await page.getByLabel('Language').selectOption('id');
  await page.setViewportSize(SIZES.phone);
  await page.getByTestId('no-payment').waitFor();
  t.equal(
    await page.getByTestId('no-payment').innerText(),
    'Saldo Anda kosong, dan gateway ini tidak menerima pembayaran daring. Minta operatornya menambahkan kredit ke akun Anda.',
    'no payment method: ask the operator',
  );
  t.equal(
    await page.getByTestId('onboarding').getByRole('link', { name: 'Isi saldo' }).count(),
    0,
    'and no top-up link',
  );
  await shoot('overview-no-payment-id');
  await page.getByLabel('Bahasa').selectOption('en');
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.waitForURL(`${gw.url}/`);

  // A path the dashboard does not have: its own page, with a 404, in the page's language.
  const missing = await page.goto(`${gw.url}/no-such-page`);
  t.equal(missing!.status(), 404, 'an unknown path answers 404');
  await page.getByRole('heading', { name: 'Page not found' }).waitFor();
  await shoot('notfound');

  // Forgotten password: a link by mail (the test SMTP server), single use; the new password works.
  await page.goto(`${gw.url}/login`);
  await page.getByRole('link', { name: 'Forgot your password?' }).click();
  await page.waitForURL('**/forgot');
  await page.getByLabel('Email address').fill(email);
  await page.getByRole('button', { name: 'Send me a reset link' }).click();
  await page.getByText(`If ${email} has an account`).waitFor();
  await shoot('forgot');
  const resetMail = mailText((await s.sink.take(email)).raw);
  const resetLink = /(https?:\/\/\S+\/reset\?token=[A-Za-z0-9_-]+)/.exec(resetMail)![1];
  t.ok(resetLink.startsWith(`${gw.url}/reset?token=`), 'the reset link opens this dashboard');
  await page.goto(resetLink);
  await page.getByLabel('New password').fill('reset');
  await page.getByLabel('Repeat the password').fill('reset');
  await page.getByRole('button', { name: 'Set the new password' }).click();
  t.equal(
    await page.locator('#password-error').innerText(),
    'Use at least 8 characters.',
    'a short new password, under the field',
  );
  await shoot('reset');
  const resetPassword = 'a password chosen after a reset';
  await page.getByLabel('New password').fill(resetPassword);
  await page.getByLabel('Repeat the password').fill(resetPassword);
  await page.getByRole('button', { name: 'Set the new password' }).click();
  await page.waitForURL('**/overview');
  t.equal(
    (await api('POST', '/login', { body: { email, password: resetPassword } })).status,
    200,
    'the reset password signs in',
  );
  t.equal((await api('POST', '/login', { body: { email, password } })).status, 401, 'the old one does not');
  await page.goto(resetLink);
  await page.getByLabel('New password').fill('another long password');
  await page.getByLabel('Repeat the password').fill('another long password');
  await page.getByRole('button', { name: 'Set the new password' }).click();
  t.equal(await alertText(), 'This link has already been used. Log in, or ask for a new link.', 'the link works once');

  // Change the password (a wrong current one is refused in Indonesian, under its field), then
  // sign out everywhere.
  await page.goto(`${gw.url}/account`);
  await page.getByLabel('Language').selectOption('id');
  await page.getByLabel('Kata sandi saat ini').fill('not my password');
  await page.getByLabel('Kata sandi baru').fill('a changed password');
  await page.getByLabel('Ulangi kata sandi').fill('a changed password');
  await page.getByRole('button', { name: 'Ganti kata sandi' }).click();
  t.equal(
    await page.locator('#current_password-error').innerText(),
    'Kata sandi saat ini salah.',
    'a wrong current password, in Indonesian under its field',
  );
  await shoot('account-id');
  await page.getByLabel('Kata sandi saat ini').fill(resetPassword);
  t.equal(await page.locator('#current_password-error').count(), 0, 'cleared on edit');
  await page.getByRole('button', { name: 'Ganti kata sandi' }).click();
  await page.getByText('Kata sandi diganti.').waitFor();
  await page.getByLabel('Bahasa').selectOption('en');
  t.equal(
    (await api('POST', '/login', { body: { email, password: 'a changed password' } })).status,
    200,
    'the changed password signs in',
  );
  const elsewhere = (await api('POST', '/login', { body: { email, password: 'a changed password' } })).json.token;
  await page.getByRole('button', { name: 'Sign out everywhere' }).click();
  await page.waitForURL(`${gw.url}/`);
  t.equal(await sessionOf(page), null, 'this browser is signed out');
  t.equal((await api('GET', '/balance', { token: elsewhere })).status, 401, 'and so is every other session');

  t.same(problems, [], 'no script errors and no content-security refusals');
});
