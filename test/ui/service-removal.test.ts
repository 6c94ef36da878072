// The Services page takes things back (issue 31) in headless Chromium against a real keeper: Delete on
// a service an incarnation uses shows the keeper's 409 naming it and removes nothing, Delete on an
// unused one removes it; Yank with a reason shows the version as yanked, as GET /v1/services/.../versions
// answers.
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { serviceRepo } from '../support/service-repo';
import { waitFor } from '../agents/harness';
import { clientFor } from '../api/helpers';
import { launch, newPage, shot, signIn } from './browser';

describe('web UI: deleting services and yanking versions', function () {
  this.timeout(180_000);
  let tk: TestKeeper;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const api = (...args: Parameters<ReturnType<typeof clientFor>>) => clientFor(tk)(...args);
  const row = (name: string) => page.locator(`tr[data-service="${name}"]`);

  before(async () => {
    tk = await startTestKeeper();
    const repo = serviceRepo({ tags: ['v1', 'v2'] });
    for (const name of ['motd', 'spare'])
      assert.equal((await api('POST', '/v1/services', { body: { name, git: repo.url, ref: 'v1' } })).status, 201);
    assert.equal((await api('POST', '/v1/services/motd/versions', { body: { ref: 'v2' } })).status, 201);
    // An incarnation of motd on no host (allow_empty): its create run commits at once.
    const created = await api('POST', '/v1/incarnations', {
      body: {
        name: 'motd-a',
        service: 'motd',
        covens: ['nobody-here'],
        input: { root: path.join(os.tmpdir(), 'motd-a') },
        allow_empty: true,
      },
    });
    assert.equal(created.status, 202, created.text);
    await waitFor(
      'motd-a to be ready',
      async () => (await api('GET', '/v1/incarnations/motd-a')).body?.status === 'ready' || undefined,
      60_000,
      200,
    );
    browser = await launch();
    ({ context, page } = await newPage(browser, tk.baseUrl));
    await signIn(page, tk.adminToken);
    await page.locator('header.top nav').getByRole('link', { name: 'Services', exact: true }).click();
    await row('motd').waitFor();
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await tk?.stop();
  });

  it("Delete on a service in use shows the keeper's 409 naming the incarnation and keeps it; on an unused one removes it", async () => {
    await row('motd').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete service motd' }).getByRole('button', { name: 'Delete' }).click();
    const alert = row('motd').getByRole('alert');
    await alert.waitFor();
    assert.match(
      await alert.innerText(),
      /^409 Conflict: service motd is used by 1 incarnation\(s\): motd-a; delete them first/,
    );
    assert.equal((await api('GET', '/v1/services/motd')).status, 200, 'nothing removed');

    await row('spare').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete service spare' }).getByRole('button', { name: 'Delete' }).click();
    await row('spare').waitFor({ state: 'detached', timeout: 10_000 });
    assert.equal((await api('GET', '/v1/services/spare')).status, 404);
  });

  it('Yank with a reason shows the version as yanked, as the API has it; the other version can still be yanked', async () => {
    await row('motd').getByRole('button', { name: 'Versions' }).click();
    const versions = page.getByTestId('versions-motd');
    const v2 = versions.locator('tr[data-version="v2"]');
    await v2.waitFor();
    assert.equal(await v2.getAttribute('data-yanked'), 'no');
    const form = v2.getByRole('form', { name: 'Yank v2' });
    await form.getByLabel('Reason').fill('breaks the banner');
    await form.getByRole('button', { name: 'Yank' }).click();
    await versions.locator('tr[data-version="v2"][data-yanked="yes"]').waitFor({ timeout: 10_000 });
    assert.match(await v2.innerText(), /yanked by admin: breaks the banner/);
    const rest = await api('GET', '/v1/services/motd/versions/v2');
    assert.equal(rest.body.yanked.reason, 'breaks the banner');
    assert.equal(await versions.locator('tr[data-version="v1"]').getAttribute('data-yanked'), 'no');
    await shot(page, '70-services-yank');
  });
});
