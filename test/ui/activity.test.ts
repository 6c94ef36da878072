// The activity page (issue 31) in headless Chromium against a real keeper: an operator registers a
// service on the Services page, once accepted and once refused, and finds both calls at the top of
// the Activity page (linked in the navigation) with the same rows GET /v1/activity answers; the
// actor, target and outcome filters are the API's, and "Older" walks the keyset pages of another
// operator's 30 refused calls without a row lost or repeated.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { clientFor, call, operatorToken } from '../api/helpers';
import { gitRepoFrom } from '../runs/keeper';
import { repoRoot } from '../support/repo';
import { launch, newPage, shot, signIn } from './browser';

describe('web UI: the activity stream', function () {
  this.timeout(120_000);
  let tk: TestKeeper;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let root: string;
  let gitUrl: string;

  const table = () => page.getByTestId('activity-table');
  const rows = () => table().locator('tbody tr[data-id]');
  const column = (col: string) => rows().locator(`td[data-col="${col}"]`).allInnerTexts();
  /** Waits until the table shows exactly these row ids (the page polls; a filter reloads it). */
  async function waitForIds(expected: string[]): Promise<void> {
    await page.waitForFunction(
      (want) =>
        JSON.stringify(
          Array.from(document.querySelectorAll('[data-testid="activity-table"] tbody tr[data-id]')).map((e) =>
            e.getAttribute('data-id'),
          ),
        ) === JSON.stringify(want),
      expected,
      { timeout: 10_000 },
    );
  }
  async function apiIds(query: string): Promise<{ ids: string[]; next: string | null }> {
    const r = await clientFor(tk)('GET', `/v1/activity?${query}`);
    assert.equal(r.status, 200, r.text);
    return { ids: r.body.items.map((x: any) => x.id), next: r.body.next_cursor };
  }

  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'ui-activity-'));
    gitUrl = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'note'),
      path.join(root, 'note.git'),
      'v1',
    );
    tk = await startTestKeeper();
    // Another operator's 30 refused calls (a name the catalog refuses): more than one page of the stream.
    const ops = await operatorToken(tk, 'ops', 'operator');
    for (let i = 0; i < 30; i++) {
      const r = await call(tk.baseUrl, 'POST', '/v1/services', {
        token: ops,
        body: { name: `Bad Name ${i}`, git: gitUrl, ref: 'v1' },
      });
      assert.equal(r.status, 400, r.text);
    }
    browser = await launch();
    ({ context, page } = await newPage(browser, tk.baseUrl));
    await signIn(page, tk.adminToken);
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await tk?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('shows a service registered on the Services page, and a refused registration, at the top of the Activity page', async () => {
    await page.locator('header.top nav').getByRole('link', { name: 'Services', exact: true }).click();
    const form = page.getByRole('form', { name: 'Register a service' });
    const register = async (name: string) => {
      await form.getByLabel('Name').fill(name);
      await form.getByLabel('Git URL').fill(gitUrl);
      await form.getByLabel('Ref (version)').fill('v1');
      await form.getByRole('button', { name: 'Register' }).click();
    };
    await register('motd');
    await page.getByRole('cell', { name: 'motd', exact: true }).waitFor({ timeout: 30_000 });
    await register('Not A Name');
    await form.getByRole('alert').waitFor();

    await page.locator('header.top nav').getByRole('link', { name: 'Activity', exact: true }).click();
    await page.getByRole('heading', { name: 'Activity' }).waitFor();
    await table().waitFor();
    const first = await apiIds('limit=25');
    assert.equal(first.ids.length, 25);
    await waitForIds(first.ids);
    // Newest first: the refused registration, then the accepted one, both by admin from this browser.
    const top = rows().nth(0);
    const second = rows().nth(1);
    assert.equal(await top.getAttribute('data-outcome'), 'refused');
    assert.equal(await top.locator('td[data-col="status"]').innerText(), '400');
    assert.equal(await second.getAttribute('data-outcome'), 'ok');
    assert.equal(await second.locator('td[data-col="status"]').innerText(), '201');
    for (const r of [top, second]) {
      assert.equal(await r.locator('td[data-col="action"]').innerText(), 'POST /v1/services');
      assert.equal(await r.locator('td[data-col="target"]').innerText(), '/v1/services');
      assert.match(await r.locator('td[data-col="actor"]').innerText(), /^admin \(operator\)$/);
    }
    assert.match(await rows().nth(2).locator('td[data-col="actor"]').innerText(), /^ops \(operator\)$/);
    await shot(page, '60-activity');
  });

  it('filters by outcome, actor and target on the server, and says which field a bad filter breaks', async () => {
    const filters = page.getByRole('form', { name: 'Filter activity' });
    await filters.getByLabel('Outcome').selectOption('ok');
    const ok = await apiIds('limit=25&outcome=ok');
    // admin: create ops, issue its token, register motd; nothing else succeeded.
    assert.equal(ok.ids.length, 3);
    await waitForIds(ok.ids);
    assert.deepEqual(await column('status'), ['201', '201', '201']);

    await filters.getByLabel('Outcome').selectOption('refused');
    await filters.getByLabel('Actor').fill('admin');
    await filters.getByRole('button', { name: 'Filter' }).click();
    const adminRefused = await apiIds('limit=25&outcome=refused&actor=admin');
    assert.equal(adminRefused.ids.length, 1);
    await waitForIds(adminRefused.ids);
    assert.deepEqual(await column('status'), ['400']);

    await filters.getByLabel('Outcome').selectOption('');
    await filters.getByLabel('Target').fill('/v1/archons');
    await filters.getByRole('button', { name: 'Filter' }).click();
    const archons = await apiIds('limit=25&actor=admin&target=%2Fv1%2Farchons');
    assert.equal(archons.ids.length, 2);
    await waitForIds(archons.ids);
    assert.deepEqual(await column('target'), ['/v1/archons/ops/tokens', '/v1/archons']);

    await filters.getByLabel('Target').fill('v1/archons');
    await filters.getByRole('button', { name: 'Filter' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /400[\s\S]*\/query\/target/);

    await filters.getByLabel('Target').fill('/v1/nothing-here');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No activity matches these filters.').waitFor({ timeout: 10_000 });
  });

  it('pages older rows with the keyset cursor: "Older" and "Newer" walk one operator\'s 30 calls exactly once', async () => {
    const filters = page.getByRole('form', { name: 'Filter activity' });
    await filters.getByLabel('Target').fill('');
    await filters.getByLabel('Actor').fill('ops');
    await filters.getByRole('button', { name: 'Filter' }).click();
    const p1 = await apiIds('limit=25&actor=ops');
    assert.ok(p1.next, 'the API has an older page');
    await waitForIds(p1.ids);
    const pager = page.getByRole('navigation', { name: 'activity pages' });
    assert.equal(await pager.getByRole('button', { name: 'Newer' }).isDisabled(), true);
    await pager.getByRole('button', { name: 'Older' }).click();
    const p2 = await apiIds(`limit=25&actor=ops&cursor=${encodeURIComponent(p1.next!)}`);
    assert.equal(p2.ids.length, 5);
    await waitForIds(p2.ids);
    assert.equal(await page.getByTestId('activity-page').innerText(), 'page 2');
    assert.equal(await pager.getByRole('button', { name: 'Older' }).isDisabled(), true, 'nothing older');
    const all = [...p1.ids, ...p2.ids].map(Number);
    assert.equal(new Set(all).size, 30, 'no row repeated');
    assert.ok(
      all.every((id, i) => i === 0 || id < all[i - 1]),
      'newest first across the pages',
    );
    await pager.getByRole('button', { name: 'Newer' }).click();
    await waitForIds(p1.ids);
  });
});
