// The dashboard in Debian's Chromium (playwright-core): a page that records script errors and
// content-security refusals, and `shoot`, which checks a page at phone and desktop sizes
// (labelled inputs, no sideways scrolling on a phone, a picture with content) and keeps the
// screenshots in .tap/screenshots.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PNG } from 'pngjs';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Test } from 'tap';
import { REPO_ROOT } from './child.js';

// Callbacks given to page.evaluate run in the page. The test process has no DOM types, so the
// little those callbacks touch is declared here.
interface PageElement {
  outerHTML: string;
  getBoundingClientRect(): { right: number };
  closest(selector: string): unknown;
}
declare const document: {
  documentElement: { scrollWidth: number };
  querySelectorAll(selector: string): Iterable<PageElement>;
};

export const CHROMIUM = [
  process.env.CHROMIUM_PATH,
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
].find((p) => p && existsSync(p));
export const SKIP_WITHOUT_CHROMIUM =
  !CHROMIUM && !process.env.CI ? 'no Chromium binary (apt-get install chromium)' : false;
export const SHOTS = path.join(REPO_ROOT, '.tap', 'screenshots');
/** The sizes the dashboard is checked at: a phone and a laptop. */
export const SIZES = { phone: { width: 390, height: 844 }, desktop: { width: 1366, height: 900 } };

/** Spread of the pixels' brightness: a blank or single-colour picture has (nearly) none. */
export function pictureStats(png: Buffer): { stdev: number; colours: number } {
  const img = PNG.sync.read(png);
  let sum = 0;
  let sq = 0;
  const colours = new Set<number>();
  const n = img.width * img.height;
  for (let i = 0; i < img.data.length; i += 4) {
    const l = 0.2126 * img.data[i] + 0.7152 * img.data[i + 1] + 0.0722 * img.data[i + 2];
    sum += l;
    sq += l * l;
    if (colours.size < 1000) colours.add((img.data[i] << 16) | (img.data[i + 1] << 8) | img.data[i + 2]);
  }
  const mean = sum / n;
  return { stdev: Math.sqrt(Math.max(0, sq / n - mean * mean)), colours: colours.size };
}

/** A ledger amount as the page must show it: every digit it has, down to cents, never rounded (en-US, under $1,000). */
export const exact = (v: string) => `$${/^(\d+\.\d{2}\d*?)0*$/.exec(v)![1]}`;
/** The same in Indonesian: US$ and a decimal comma. */
export const exactId = (v: string) => exact(v).replace('$', 'US$').replace('.', ',');

/**
 * A ledger amount as the dashboard shows it (web/src/format.ts, en-US, under $1,000): from $1
 * up, cents; below, three significant digits; digits cut, never rounded.
 */
export function shownUsd(v: string): string {
  const [int, frac = ''] = v.replace('-', '').split('.');
  const places = /[1-9]/.test(int) ? 2 : Math.min(9, Math.max(2, /^0*/.exec(frac)![0].length + 3));
  const digits = frac.slice(0, places).replace(/0+$/, '').padEnd(2, '0');
  return `${v.startsWith('-') && /[1-9]/.test(int + digits) ? '-' : ''}$${Number(int)}.${digits}`;
}
/** The same in Indonesian: US$ and a decimal comma. */
export const shownUsdId = (v: string) => shownUsd(v).replace('$', 'US$').replace('.', ',');

export async function launchBrowser(t: Test): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  t.teardown(() => browser.close());
  return browser;
}

/** A page in English on a laptop, in a time zone other than UTC; `problems` collects faults. */
export async function openPage(
  browser: Browser,
  opts: { locale?: string; timezoneId?: string } = {},
): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({
    viewport: SIZES.desktop,
    locale: opts.locale ?? 'en-US',
    timezoneId: opts.timezoneId ?? 'Asia/Jakarta',
  });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  // Failed API calls are logged by Chromium as "Failed to load resource"; those are expected
  // (the bad-input cases). Anything else (a CSP refusal, an exception) is a fault.
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  return { page, problems };
}

declare const localStorage: { getItem(key: string): string | null };
/** The dashboard's session token as the page keeps it, or null when signed out. */
export const sessionOf = (page: Page) => page.evaluate(() => localStorage.getItem('airouter.session'));

/** Checks and photographs the page at both sizes, then leaves it at the desktop size. */
export function shooter(t: Test, page: Page, prefix = '') {
  return async function shoot(name: string) {
    for (const [size, viewport] of Object.entries(SIZES)) {
      await page.setViewportSize(viewport);
      await page.waitForTimeout(150);
      const unlabelled = await page.$$eval('input:not([type=hidden]), select, textarea', (els) =>
        els
          .filter(
            (e) =>
              (e as unknown as { labels: { length: number } | null }).labels?.length === 0 &&
              !e.getAttribute('aria-label'),
          )
          .map((e) => e.outerHTML),
      );
      t.same(unlabelled, [], `${name}: every input has a label`);
      if (size === 'phone') {
        const wide = await page.evaluate((w) => {
          const past = [...document.querySelectorAll('body *')].filter(
            (e) => e.getBoundingClientRect().right > w + 1 && !e.closest('.scroll, nav'),
          );
          return {
            width: document.documentElement.scrollWidth,
            past: past.slice(0, 3).map((e) => e.outerHTML.slice(0, 120)),
          };
        }, viewport.width);
        t.ok(wide.width <= viewport.width, `${name}: fits a phone's width (${wide.width}px)`, { past: wide.past });
      }
      const png = await page.screenshot({ fullPage: true });
      writeFileSync(path.join(SHOTS, `${prefix}${name}-${size}.png`), png);
      const stats = pictureStats(png);
      t.ok(
        stats.stdev > 12 && stats.colours > 16,
        `${name} at ${size}: not blank (brightness spread ${stats.stdev.toFixed(1)}, ${stats.colours} colours)`,
      );
    }
    await page.setViewportSize(SIZES.desktop);
  };
}
