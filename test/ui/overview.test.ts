// The overview page (issue 35) in headless Chromium against a real keeper with a fleet that has a past
// (test/api/overview-fixture.ts): it is where signing in lands, its counts and every chart's marks
// carry exactly the values of GET /v1/overview, and what needs attention links to the item.
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { clientFor } from '../api/helpers';
import { seedOverview } from '../api/overview-fixture';
import { launch, newPage, shot, signIn } from './browser';

describe('web UI: the overview', function () {
  this.timeout(120_000);
  let tk: TestKeeper;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let o: any;

  before(async () => {
    tk = await startTestKeeper({
      mutate: (doc) => {
        doc.reaper = { interval: '1h', lease_ttl: '3s' };
      },
    });
    await seedOverview(tk);
    o = (await clientFor(tk)('GET', '/v1/overview')).body;
    browser = await launch();
    ({ context, page } = await newPage(browser, tk.baseUrl));
    await signIn(page, tk.adminToken, { stayOnOverview: true });
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await tk?.stop();
  });

  const tiles = (id: string) =>
    page
      .getByTestId(`tiles-${id}`)
      .locator('.tile')
      .evaluateAll((els) =>
        els.map((e) => [
          e.getAttribute('data-key'),
          Number(e.getAttribute('data-count')),
          e.getAttribute('data-change'),
        ]),
      );
  const marks = (id: string) =>
    page
      .getByTestId(`chart-${id}`)
      .locator('[data-point]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-values')));

  it('lands on the overview after sign-in with souls and incarnations by status and the change over the last hour', async () => {
    assert.equal(new URL(page.url()).pathname, '/ui/');
    await page.getByTestId('tiles-souls').waitFor();
    assert.deepEqual(await tiles('souls'), [
      ['pending', 2, '0'],
      ['connected', 7, '-3'],
      ['disconnected', 3, '3'],
      ['revoked', 0, '0'],
    ]);
    assert.match(
      await page.getByTestId('tiles-souls').locator('[data-key="connected"]').innerText(),
      /connected\s+7\s+−3 in 1 h/,
    );
    assert.deepEqual(await tiles('incarnations'), [
      ['ready', 1, null],
      ['applying', 1, null],
      ['error_locked', 1, null],
    ]);
    assert.deepEqual(await tiles('drift'), [
      ['in_sync', 1, null],
      ['drifted', 1, null],
      ['unchecked', 1, null],
      ['check_failed', 0, null],
    ]);
    await shot(page, '40-overview');
  });

  it('draws each chart with the values of the API answer, one mark per point', async () => {
    const c = o.charts;
    assert.deepEqual(
      await marks('runs-per-hour'),
      c.runs_per_hour.map((h: any) => `${h.succeeded},${h.failed},${h.running}`),
    );
    assert.deepEqual(
      await marks('duration-per-day'),
      c.duration_per_day.map((d: any) => `${d.median_ms},${d.p95_ms}`),
    );
    assert.deepEqual(
      await marks('hosts-changed'),
      c.hosts_changed_per_run.map((r: any) => String(r.hosts_changed)),
    );
    assert.deepEqual(
      await marks('connected-souls'),
      c.connected_souls.map((p: any) => String(p.connected)),
    );
    // The marks are drawn, not only labelled: the failed bar of the failed run's hour has a height.
    const failedBars = page.getByTestId('chart-runs-per-hour').locator('rect.fill-bad');
    assert.equal(await failedBars.count(), 1);
    assert.ok(Number(await failedBars.getAttribute('height')) > 0);
    assert.equal(await page.getByTestId('chart-connected-souls').locator('polyline').count(), 1);
    assert.equal(
      await page.getByTestId('chart-hosts-changed').locator('[data-point="web.apply.2"] title').textContent(),
      'web.apply.2: 3 of 12 hosts changed',
    );
  });

  it('lists what needs attention with its reason and the last runs, and links to the locked incarnation', async () => {
    const attention = page.getByTestId('attention');
    assert.deepEqual(
      await attention
        .locator('tbody tr')
        .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-incarnation') ?? tr.getAttribute('data-run'))),
      ['db', 'cache', 'db.apply.1'],
    );
    assert.match(
      await attention.locator('tr[data-incarnation="db"]').innerText(),
      /error_locked[\s\S]*node3\.ov\.example\.com failed: permission denied/,
    );
    assert.match(
      await attention.locator('tr[data-incarnation="cache"]').innerText(),
      /drifted on 1 host \(node4\.ov\.example\.com\)/,
    );
    assert.deepEqual(
      await page
        .getByTestId('last-runs')
        .locator('tbody tr')
        .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run'))),
      o.last_runs.map((r: any) => r.apply_id),
    );
    await attention.locator('tr[data-incarnation="db"]').getByRole('link', { name: 'db' }).click();
    await page.waitForURL('**/ui/incarnations/db');
    await page.getByRole('heading', { name: /db/ }).first().waitFor();
  });
});
