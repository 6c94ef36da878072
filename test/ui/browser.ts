// Headless Debian Chromium for the web UI tests, and the moves every test makes: open /ui, paste
// the token, take a screenshot into test-results/ui/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { repoRoot } from '../support/repo';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const SHOTS = path.join(repoRoot(), 'test-results', 'ui');

export async function launch(): Promise<Browser> {
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: install the Debian package chromium (make test does)`);
  assert.ok(
    fs.existsSync(path.join(repoRoot(), 'dist', 'ui-app', 'index.html')),
    'the web UI is not built: run make build',
  );
  fs.mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/** A fresh tab with its own session storage; the clipboard is readable so the copy button can be checked. */
export async function newPage(browser: Browser, baseUrl: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: baseUrl });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  return { context, page: await context.newPage() };
}

/**
 * Signs in, which lands on the overview; then opens Souls (where most tests start) unless the
 * test is about the overview itself.
 */
export async function signIn(page: Page, token: string, opts: { stayOnOverview?: boolean } = {}): Promise<void> {
  await page.goto('/ui/');
  await page.getByLabel('Operator token (JWT)').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  if (opts.stayOnOverview) return;
  await page.locator('header.top nav').getByRole('link', { name: 'Souls', exact: true }).click();
  await page.getByRole('heading', { name: 'Souls' }).waitFor();
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Every URL the page asked for, to prove the token never rode in one. */
export function recordUrls(page: Page): string[] {
  const urls: string[] = [];
  page.on('request', (r) => urls.push(r.url()));
  return urls;
}
