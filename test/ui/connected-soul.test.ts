// A real soul in the web UI: the operator registers it in the browser and reads its bootstrap
// token there; that very token onboards a real `soul init` (own UTS namespace, real PKI), and
// `soul run` brings the row to `connected` without a reload; when the soul dies, the row follows to
// `disconnected`. This is the whole path of issue 6's "see a connected soul".
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { endpointOf, soulInit, soulRun, uniqueSid, writeSoulConfig, type RunningSoul } from '../agents/harness';
import { launch, newPage, shot, signIn } from './browser';

describe('web UI: a connected soul', function () {
  this.timeout(120_000);
  let tk: TestKeeper;
  let browser: Browser;
  let soul: RunningSoul | undefined;
  let dir: string;

  before(async () => {
    tk = await startTestKeeper();
    browser = await launch();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keeper-ui-soul-'));
  });
  after(async () => {
    await soul?.kill();
    await browser?.close();
    await tk?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('registers a soul in the UI, onboards it with the token read there, and shows it connected, then disconnected', async () => {
    const sid = uniqueSid('ui');
    const { context, page } = await newPage(browser, tk.baseUrl);
    try {
      await signIn(page, tk.adminToken);
      const form = page.getByRole('form', { name: 'Register a soul' });
      await form.getByLabel(/SID/).fill(sid);
      await form.getByLabel('Covens').fill('web');
      await form.getByRole('button', { name: 'Register' }).click();
      const token = await page.getByTestId('bootstrap-token').innerText();

      const config = writeSoulConfig(dir, sid, [endpointOf(tk)]);
      const init = await soulInit(sid, config, token);
      assert.equal(init.code, 0, `soul init with the token from the UI: ${init.stderr}`);
      await page.getByRole('button', { name: 'I have copied it' }).click();

      soul = soulRun(sid, config);
      const row = page.locator(`tr[data-sid="${sid}"]`);
      await row.locator('.badge', { hasText: 'connected' }).waitFor({ timeout: 20_000 });
      assert.match(await row.innerText(), /web[\s\S]*\ds ago/, 'covens and a recent last-seen time');
      assert.match(await row.innerText(), /\ds ago\s+in (29|30)d/, "the certificate's expiry (720 h)");
      await shot(page, '08-soul-connected');

      await soul.kill();
      soul = undefined;
      await row.locator('.badge', { hasText: 'disconnected' }).waitFor({ timeout: 20_000 });
      await shot(page, '09-soul-disconnected');
    } finally {
      await context.close();
    }
  });
});
