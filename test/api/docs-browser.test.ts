// /docs in headless Chromium (issue 3, "Checked by"): the viewer loads the full spec from this
// keeper, the operator pastes a JWT, and Try It on GET /v1/souls shows the registered souls.
// Needs Chromium (Debian package `chromium`); the screenshot goes to test-results/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { repoRoot } from '../support/repo';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { call } from './helpers';

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

describe('Operator API: /docs in a browser', function () {
  this.timeout(120_000);
  let tk: TestKeeper;
  let browser: Browser;

  before(async () => {
    assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: install the Debian package chromium (make test does)`);
    tk = await startTestKeeper();
    const reg = await call(tk.baseUrl, 'POST', '/v1/souls', {
      token: tk.adminToken,
      body: { sid: 'docs-demo.example.com', transport: 'agent', covens: ['web'] },
    });
    assert.equal(reg.status, 201, reg.text);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  });
  after(async () => {
    await browser?.close();
    await tk?.stop();
  });

  it('loads the spec, takes a pasted token, and Try It on GET /v1/souls shows the list', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const offHost: string[] = [];
    const soulsCalls: { auth: string | undefined; status: number }[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(tk.baseUrl) && !r.url().startsWith('data:')) offHost.push(r.url());
    });
    page.on('response', async (r) => {
      if (new URL(r.url()).pathname === '/v1/souls')
        soulsCalls.push({ auth: (await r.request().headerValue('authorization')) ?? undefined, status: r.status() });
    });

    await page.goto(`${tk.baseUrl}/docs`);
    await page.getByText('Keeper Operator API').first().waitFor();
    for (const op of ['Register a host', 'List souls', 'Reissue a bootstrap token']) {
      assert.ok((await page.getByRole('button', { name: op }).count()) > 0, `${op} is in the sidebar`);
    }
    await page.locator('button', { hasText: 'Open Search' }).first().click();
    await page.keyboard.type('issue');
    await page.getByText('Issue (or reissue) an operator').first().waitFor();
    await page.keyboard.press('Escape');

    await page.locator('input[placeholder="Token"]').first().fill(tk.adminToken);
    await page.getByRole('button', { name: 'List souls' }).first().click();
    await page.getByRole('button', { name: /Test Request\s*\(get \/v1\/souls\)/ }).click();
    await page.getByRole('button', { name: /^Send/ }).first().click();
    await page.getByText('docs-demo.example.com').first().waitFor({ timeout: 20_000 });
    await page.getByText('200 OK').first().waitFor();

    fs.mkdirSync(path.join(repoRoot(), 'test-results'), { recursive: true });
    await page.screenshot({ path: path.join(repoRoot(), 'test-results', 'docs-try-it.png') });
    assert.deepEqual(
      soulsCalls.map((c) => c.status),
      [200],
    );
    assert.equal(soulsCalls[0].auth, `Bearer ${tk.adminToken}`);
    assert.deepEqual(offHost, [], 'the page fetched nothing from another host');
  });
});
