// A run waiting at a gate between batches, in the /ui run report (issue 30), against a real keeper
// with its Temporal workers and three real souls (fixture test/fixtures/services/gated: batches of
// two, a health check and an approval after batch 1). The report says what the run waits for and
// since when; a viewer is offered no Approve or Cancel run, and its call gets the keeper's 403 naming
// the permission and lets nothing through; an operator's Approve lets batch 2 start, the wait disappears from the page as the event
// stream reports it ended, and the report ends `succeeded` with the third host written. A second run
// waiting for approval is cancelled with Cancel run and its dialog: the page shows it `failed`, the
// third host is never written, the incarnation is `error_locked` naming the operator.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestKeeper } from '../support/keeper';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import { createGatedAndAwaitApproval } from '../runs/gated';
import { repoRoot } from '../support/repo';
import { operatorToken } from '../api/helpers';
import { launch, newPage, shot, signIn } from './browser';

describe('web UI: a run waiting at a gate shows it and can be approved or cancelled', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[] = [];
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const note = (s: TestSoul) => {
    const f = path.join(root, s.sid, 'motd');
    return fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : null;
  };
  const runOf = async (id: string) => (await api(k, 'GET', `/v1/incarnations/gated/runs/${id}`)).body;
  const pageAs = async (token: string): Promise<Page> => {
    const p = await newPage(browser, k.baseUrl);
    contexts.push(p.context);
    await signIn(p.page, token, { stayOnOverview: true });
    return p.page;
  };

  before(async () => {
    root = tempDir('ui-gates-');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'gated'),
      path.join(root, 'gated.git'),
      'v1',
    );
    k = await startRunKeeper();
    // Render order is sid order: batch 1 is souls[0..1], batch 2 souls[2].
    souls = (await startSouls(k, path.join(root, 'souls'), [['edge'], ['edge'], ['edge']])).sort((a, b) =>
      a.sid.localeCompare(b.sid),
    );
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'gated', git: url, ref: 'v1' })).status, 201);
    browser = await launch();
  });
  after(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await Promise.all(souls.map((s) => s.run.kill()));
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('shows "Waiting for approval of batch 1"; a viewer is offered no approval and gets the 403; the operator approves and the run succeeds', async () => {
    const waiting = await createGatedAndAwaitApproval(k, root);
    const id = waiting.apply_id as string;

    const viewer = await pageAs(await operatorToken(k, 'vic', 'viewer'));
    await viewer.goto(`/ui/incarnations/gated/runs/${id}`);
    const vbox = viewer.getByTestId('run-waiting');
    await vbox.waitFor({ timeout: 60_000 });
    assert.match(await vbox.innerText(), /Waiting for approval of batch 1 since /);
    assert.equal(await vbox.locator('time').getAttribute('datetime'), waiting.waiting.since);
    // The viewer's role holds no runs:approve: neither Approve nor Cancel run is offered (the notice
    // appears only once the registry has answered what the role may do), and the keeper refuses the
    // call anyway, naming the permission.
    await vbox
      .locator('[data-not-granted-quiet][data-permission="runs:approve"]')
      .first()
      .waitFor({ state: 'attached' });
    assert.equal(await vbox.getByRole('button').count(), 0, 'no Approve or Cancel run for a viewer');
    const denied = await viewer.evaluate(async (url) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { Authorization: `Bearer ${sessionStorage.getItem('keeper.token')}` },
      });
      return { status: res.status, body: await res.text() };
    }, `/v1/incarnations/gated/runs/${id}/approve`);
    assert.equal(denied.status, 403);
    assert.match(denied.body, /runs:approve/);
    await shot(viewer, 'run-waiting-viewer');
    assert.equal((await runOf(id)).waiting?.for, 'approval', 'still waiting after the refused approval');
    assert.deepEqual(souls.map(note), ['v1\n', 'v1\n', null]);

    const ops = await pageAs(await operatorToken(k, 'ops', 'operator'));
    await ops.goto(`/ui/incarnations/gated/runs/${id}`);
    const obox = ops.getByTestId('run-waiting');
    await obox.waitFor({ timeout: 60_000 });
    await shot(ops, 'run-waiting');
    await obox.getByRole('button', { name: 'Approve' }).click();
    // The event stream says the wait ended, then the run ends and the page loads the final report.
    await obox.waitFor({ state: 'detached', timeout: 120_000 });
    await ops.locator('.run-report .badge', { hasText: /^succeeded$/ }).waitFor({ timeout: 120_000 });
    assert.equal((await settled(k, 'gated', 120_000)).status, 'ready');
    assert.deepEqual(souls.map(note), ['v1\n', 'v1\n', 'v1\n']);
    // The viewer's page followed the same stream: the wait is gone there too.
    await vbox.waitFor({ state: 'detached', timeout: 60_000 });
  });

  it('Cancel run, confirmed in its dialog, stops the run at the gate: failed, batch 2 untouched, error_locked', async () => {
    const r = await api(k, 'POST', '/v1/incarnations/gated/runs', {
      operation: 'create',
      input: { root, greeting: 'v2' },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const id = r.body.apply_id as string;
    const ops = await pageAs(await operatorToken(k, 'ops-cancel', 'operator'));
    await ops.goto(`/ui/incarnations/gated/runs/${id}`);
    const box = ops.getByTestId('run-waiting');
    await box.and(ops.locator('[data-waiting-for="approval"]')).waitFor({ timeout: 120_000 });
    await box.getByRole('button', { name: 'Cancel run' }).click();
    const dialog = ops.getByRole('dialog');
    await dialog.waitFor();
    // Dismissing the dialog sends nothing: the run still waits.
    await dialog.getByRole('button', { name: 'Keep waiting' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await runOf(id)).waiting?.for, 'approval');
    await box.getByRole('button', { name: 'Cancel run' }).click();
    await shot(ops, 'run-cancel-dialog');
    await dialog.getByRole('button', { name: 'Cancel the run' }).click();
    await box.waitFor({ state: 'detached', timeout: 120_000 });
    await ops.locator('.run-report .badge', { hasText: /^failed$/ }).waitFor({ timeout: 120_000 });
    const inc = await settled(k, 'gated', 120_000);
    assert.equal(inc.status, 'error_locked');
    assert.equal(inc.state.greeting, 'v1', 'nothing committed');
    assert.match((await runOf(id)).error, /^cancelled by ops-cancel while waiting for approval after batch 1;/);
    assert.deepEqual(souls.map(note), ['v2\n', 'v2\n', 'v1\n'], 'batch 2 never dispatched');
  });
});
