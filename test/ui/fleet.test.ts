// The web UI at fleet scale, in headless Chromium against a real keeper with a few hundred registered
// souls: counts by status, server-side filters (status, coven, SID search), keyset paging forward and
// back; the incarnations list filtered and paged; a run page with failures expanded and the other
// outcomes collapsed. Souls are registered through the API; their registry status (what the stream
// hub writes when a soul connects or drops) and the incarnations and runs of the list tests are
// written to the database directly, since hundreds of live souls are not what is under test here.
import assert from 'node:assert/strict';
import type { Browser, Page, BrowserContext } from 'playwright-core';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { clientFor } from '../api/helpers';
import { launch, newPage, shot, signIn } from './browser';

const N = 250;
const sidOf = (i: number) => `${i % 5 === 0 ? 'db' : 'web'}-${String(i).padStart(3, '0')}.fleet.example.com`;

describe('web UI at fleet scale: filters, counts, paging', function () {
  this.timeout(180_000);
  let tk: TestKeeper;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const statusOf = (i: number) => (i % 5 === 1 ? 'disconnected' : i % 5 < 3 ? 'connected' : 'pending');

  before(async () => {
    // No presence reconciler pass during the test: it would (rightly) mark the souls written as
    // connected below disconnected, since no stream holds a lease for them.
    tk = await startTestKeeper({
      mutate: (doc) => {
        doc.reaper = { interval: '1h', lease_ttl: '3s' };
      },
    });
    const api = clientFor(tk);
    for (let i = 0; i < N; i += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, N - i) }, (_, j) => i + j).map(async (n) => {
          const r = await api('POST', '/v1/souls', {
            body: { sid: sidOf(n), transport: 'agent', covens: n % 5 === 0 ? ['db'] : ['web'] },
          });
          assert.equal(r.status, 201, r.text);
        }),
      );
    }
    const db = tk.keeper.runtime.db;
    for (const st of ['connected', 'disconnected'] as const) {
      const sids = Array.from({ length: N }, (_, i) => i)
        .filter((i) => statusOf(i) === st)
        .map(sidOf);
      await db('souls').whereIn('sid', sids).update({ status: st, last_seen_at: new Date() });
    }
    browser = await launch();
    ({ context, page } = await newPage(browser, tk.baseUrl));
    await signIn(page, tk.adminToken);
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await tk?.stop();
  });

  const expected = (pred: (i: number) => boolean) => Array.from({ length: N }, (_, i) => i).filter(pred).length;
  const count = async (key: string) =>
    Number((await page.getByTestId(`count-${key}`).locator('strong').innerText()).trim());
  const rows = () => page.getByTestId('souls-table').locator('tbody tr[data-sid]');
  const settle = async (n: number) => {
    await page.waitForFunction(
      (want) => document.querySelectorAll('[data-testid="souls-table"] tbody tr[data-sid]').length === want,
      n,
      { timeout: 10_000 },
    );
  };

  it('shows the counts by status at the top and one page of 100 souls', async () => {
    await page
      .getByTestId('count-all')
      .filter({ hasText: String(N) })
      .waitFor({ timeout: 10_000 });
    assert.equal(
      await count('pending'),
      expected((i) => statusOf(i) === 'pending'),
    );
    assert.equal(
      await count('connected'),
      expected((i) => statusOf(i) === 'connected'),
    );
    assert.equal(
      await count('disconnected'),
      expected((i) => statusOf(i) === 'disconnected'),
    );
    await settle(100);
    assert.equal(await page.getByTestId('souls-page').innerText(), 'page 1');
    await shot(page, '30-fleet-souls');
  });

  it('pages forward and back with the cursors, in SID order, without losing or repeating a soul', async () => {
    const seen: string[] = [];
    for (const want of [100, 100, 50]) {
      await settle(want);
      seen.push(...(await rows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-sid')!))));
      if (want === 50) break;
      const before = await rows().first().getAttribute('data-sid');
      await page.getByRole('button', { name: 'Next' }).click();
      await page.waitForFunction(
        (b) => document.querySelector('[data-testid="souls-table"] tbody tr[data-sid]')?.getAttribute('data-sid') !== b,
        before,
      );
    }
    assert.equal(await page.getByTestId('souls-page').innerText(), 'page 3');
    assert.ok(await page.getByRole('button', { name: 'Next' }).isDisabled(), 'no page after the last');
    assert.deepEqual(seen, Array.from({ length: N }, (_, i) => sidOf(i)).sort());
    await page.getByRole('button', { name: 'Previous' }).click();
    await settle(100);
    assert.equal(await rows().first().getAttribute('data-sid'), seen[100]);
    assert.equal(await page.getByTestId('souls-page').innerText(), 'page 2');
  });

  it('filters by status from its count, by coven and by a part of the SID, on the server; a filter starts at page 1', async () => {
    await page.getByTestId('count-disconnected').click();
    const disconnected = expected((i) => statusOf(i) === 'disconnected');
    await settle(disconnected);
    assert.equal(await page.getByTestId('souls-page').innerText(), 'page 1');
    const statuses = await rows().evaluateAll((trs) => trs.map((tr) => tr.querySelector('.badge')?.textContent));
    assert.ok(
      statuses.every((s) => s === 'disconnected'),
      statuses.join(','),
    );
    assert.equal(await count('all'), N, 'the counts leave the status filter out');

    await page.getByRole('form', { name: 'Filter souls' }).getByLabel('Coven').fill('db');
    const dbDisconnected = expected((i) => i % 5 === 0 && statusOf(i) === 'disconnected');
    await page
      .getByTestId('count-all')
      .filter({ hasText: String(expected((i) => i % 5 === 0)) })
      .waitFor();
    await settle(dbDisconnected);

    await page.getByTestId('count-all').click();
    await page.getByRole('form', { name: 'Filter souls' }).getByLabel('Coven').fill('');
    await page.getByRole('form', { name: 'Filter souls' }).getByLabel('SID contains').fill('WEB-01');
    const matching = expected((i) => sidOf(i).includes('web-01'));
    await settle(matching);
    const sids = await rows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-sid')!));
    assert.ok(
      sids.every((s) => s.includes('web-01')),
      sids.join(','),
    );
    await page.getByRole('form', { name: 'Filter souls' }).getByLabel('SID contains').fill('nothing-like-this');
    await page.getByText('No soul matches these filters.').waitFor();
    await page.getByRole('form', { name: 'Filter souls' }).getByLabel('SID contains').fill('');
  });

  it('filters and pages the incarnations list', async () => {
    const db = tk.keeper.runtime.db;
    await db('services').insert([
      { name: 'motd', git: 'file:///srv/motd.git', ref: 'v1' },
      { name: 'nginx', git: 'file:///srv/nginx.git', ref: 'v1' },
    ]);
    await db('incarnations').insert(
      Array.from({ length: 130 }, (_, i) => ({
        name: `inc-${String(i).padStart(3, '0')}`,
        service: i % 2 ? 'nginx' : 'motd',
        covens: ['web'],
        status: i % 10 === 0 ? 'error_locked' : 'ready',
      })),
    );
    await page.getByRole('link', { name: 'Incarnations' }).click();
    const table = page.getByTestId('incarnations-table');
    const incRows = table.locator('tbody tr[data-name]');
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="incarnations-table"] tbody tr[data-name]').length === 100,
    );
    await page.getByRole('button', { name: 'Next' }).click();
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="incarnations-table"] tbody tr[data-name]').length === 30,
    );
    assert.equal(await incRows.first().getAttribute('data-name'), 'inc-100');

    const form = page.getByRole('form', { name: 'Filter incarnations' });
    await form.getByLabel('Status').selectOption('error_locked');
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="incarnations-table"] tbody tr[data-name]').length === 13,
    );
    assert.equal(await page.getByTestId('incarnations-page').innerText(), 'page 1');
    await form.getByLabel('Service').selectOption('nginx');
    await page.getByText('No incarnation matches these filters.').waitFor();
    await form.getByLabel('Service').selectOption('motd');
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="incarnations-table"] tbody tr[data-name]').length === 13,
    );
    await shot(page, '31-fleet-incarnations');
  });

  it('a run page with many hosts: counts per outcome, failures expanded with their steps, the rest collapsed', async () => {
    const db = tk.keeper.runtime.db;
    const applyId = 'inc-000.create.fleetui';
    await db('incarnation_runs').insert({
      apply_id: applyId,
      incarnation: 'inc-000',
      operation: 'create',
      status: 'failed',
      phase: 'done',
      finished_at: new Date(),
      error: 'a host failed',
    });
    const hosts = Array.from({ length: 300 }, (_, i) => ({
      sid: `h-${String(i).padStart(3, '0')}.fleet.example.com`,
      status: i < 3 ? 'failed' : i < 5 ? 'unknown' : i % 2 ? 'changed' : 'ok',
    }));
    await db('run_hosts').insert(
      hosts.map((h) => ({
        apply_id: applyId,
        sid: h.sid,
        status: h.status,
        reason: h.status === 'unknown' ? 'the soul did not answer' : null,
      })),
    );
    await db('run_steps').insert(
      hosts.flatMap((h) =>
        [0, 1].map((idx) => ({
          apply_id: applyId,
          sid: h.sid,
          step_index: idx,
          name: `step ${idx}`,
          module: 'core.file.present',
          status:
            h.status === 'failed' && idx === 1 ? 'failed' : h.status === 'unknown' && idx === 1 ? 'unknown' : 'ok',
          changed: h.status === 'changed' && idx === 0,
          output: h.status === 'failed' && idx === 1 ? 'permission denied' : '',
        })),
      ),
    );
    await db('incarnations').where({ name: 'inc-000' }).update({ last_apply_id: applyId });
    await page.goto('/ui/incarnations/inc-000');
    const counts = page.getByTestId('run-counts');
    await counts.waitFor({ timeout: 10_000 });
    assert.match(await counts.innerText(), /failed 3[\s\S]*unknown 2[\s\S]*changed 148[\s\S]*ok 147/);
    const steps = page.getByTestId('run-steps');
    assert.equal(
      await steps.locator('details.outcome-group[data-outcome="failed"] details.run-host[open]').count(),
      3,
      'failed hosts are expanded',
    );
    assert.equal(await steps.locator('details.run-host').count(), 5, 'only failed and unknown hosts are rendered');
    assert.equal(
      await steps.getByText('permission denied').first().isVisible(),
      false,
      'step output stays folded until asked for',
    );
    assert.equal(await steps.locator('details.outcome-group[data-outcome="failed"] tbody tr').count(), 6);
    await steps.locator('details.outcome-group[data-outcome="ok"] > summary').click();
    await page.waitForFunction(
      () => document.querySelectorAll('details.outcome-group[data-outcome="ok"] details.run-host').length === 147,
    );
    await shot(page, '32-fleet-run');
  });
});
