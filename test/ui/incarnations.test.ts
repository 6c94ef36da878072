// Incarnations in the web UI against a real keeper with its Temporal workers and two real souls
// (issue 6, "Checked by"): create an incarnation and watch it become `ready`, read the run report
// per host and step with its Temporal link, open the history and diff two snapshots, then lock it
// with a failing run and use Unlock and Unlock and retry; a newer published version is offered and
// upgraded to. Everything is the real path, the scenario engine included (fixture service
// test/fixtures/services/note; its v2 tag is the same commit: a code-only release).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { TestKeeper } from '../support/keeper';
import { operatorToken } from '../api/helpers';
import { api, gitRepoFrom, startRunKeeper, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import { repoRoot } from '../support/repo';
import { launch, newPage, shot, signIn } from './browser';

describe('web UI: incarnations', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[] = [];
  let browser: Browser;
  let page: Page;
  let close: () => Promise<void>;

  before(async () => {
    root = tempDir('ui-runs-');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'note'),
      path.join(root, 'note.git'),
      'v1',
    );
    execFileSync('git', ['tag', 'v2'], { cwd: path.join(root, 'note.git'), stdio: 'pipe' });
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['web'], ['web']]);
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'motd', git: url, ref: 'v1' })).status, 201);
    browser = await launch();
    const p = await newPage(browser, k.baseUrl);
    page = p.page;
    close = () => p.context.close();
    await signIn(page, k.adminToken);
  });
  after(async () => {
    await close?.();
    await browser?.close();
    await Promise.all(souls.map((s) => s.run.kill()));
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** The form's input as an operator types it: the note's root is this test's directory. */
  const input = (fields: Record<string, string>) => JSON.stringify({ root, ...fields });
  const badge = (status: string) => page.locator('h2 .badge', { hasText: new RegExp(`^${status}$`) });

  it('creates an incarnation and watches it become ready, with the run report per host and step and a Temporal link', async () => {
    await page.getByRole('link', { name: 'Incarnations' }).click();
    const form = page.getByRole('form', { name: 'Create an incarnation' });
    await form.getByLabel('Name').fill('motd-ui');
    await form.getByLabel('Covens').fill('web');
    await form.getByLabel('Input (JSON)').fill(input({ greeting: 'hello' }));
    await form.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL('**/ui/incarnations/motd-ui');
    await badge('ready').waitFor({ timeout: 60_000 });
    assert.deepEqual(JSON.parse(await page.getByTestId('current-state').innerText()), {
      greeting: 'hello',
      motd: { lines: 1, by: 'note' },
    });

    // Hosts are grouped by outcome; a group that is not a failure is collapsed until opened.
    await page.getByTestId('run-counts').filter({ hasText: 'changed 2' }).waitFor({ timeout: 10_000 });
    const steps = page.getByTestId('run-steps');
    const group = steps.locator('details.outcome-group[data-outcome="changed"]');
    assert.equal(await group.locator('details.run-host').count(), 0, 'a collapsed group renders no hosts');
    await group.locator('summary').first().click();
    for (const s of souls) await group.locator(`details.run-host[data-sid="${s.sid}"] > summary`).click();
    await steps.locator('tbody tr').nth(3).waitFor();
    const text = await steps.innerText();
    for (const s of souls) assert.ok(text.includes(s.sid), `${s.sid} is in the report`);
    assert.equal(await steps.locator('tbody tr').count(), 4, 'two hosts x two steps');
    assert.equal(
      (await steps.locator('tbody .badge', { hasText: /^changed$/ }).count()) >= 2,
      true,
      'the motd step changed on both hosts',
    );
    const link = page.getByRole('link', { name: 'Open in Temporal Web UI' });
    assert.match((await link.getAttribute('href')) ?? '', /\/namespaces\/default\/workflows\/motd-ui\.create\./);
    assert.equal(fs.readFileSync(path.join(root, souls[0]!.sid, 'motd'), 'utf8'), 'hello\n');
    await shot(page, '10-incarnation-ready');
  });

  it('runs an operation and shows the history with a diff between two snapshots', async () => {
    const form = page.getByRole('form', { name: 'Run an operation' });
    await form.getByLabel('Operation').fill('create');
    // One field per declared input, prefilled with the last run's input, defaults shown (issue 35).
    const field = (n: string) => form.locator(`[name="input-${n}"]`);
    await page.waitForFunction(
      () => (document.querySelector('[name="input-greeting"]') as HTMLInputElement | null)?.value === 'hello',
    );
    assert.equal(await field('root').inputValue(), root);
    assert.equal(await field('file').getAttribute('placeholder'), 'default: motd');
    assert.equal(await field('broken').isChecked(), false);
    assert.equal(await field('broken').getAttribute('type'), 'checkbox');
    const version = await api(k, 'GET', '/v1/services/motd/versions/v1');
    const declared = version.body.operations.find((o: { name: string }) => o.name === 'create').inputs as {
      name: string;
      required: boolean;
    }[];
    assert.deepEqual(
      await form
        .locator('[data-testid="input-fields"] [name^="input-"]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('name'))),
      declared.map((i) => `input-${i.name}`),
      'one field per declared input',
    );
    assert.deepEqual(
      await form
        .locator('label:has(abbr.required) [name^="input-"]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('name'))),
      declared.filter((i) => i.required).map((i) => `input-${i.name}`),
      'required inputs are marked',
    );
    await field('greeting').fill('hi there');
    await shot(page, '13-run-form-fields');
    await form.getByRole('button', { name: 'Run' }).click();
    await page.getByTestId('current-state').filter({ hasText: 'hi there' }).waitFor({ timeout: 60_000 });
    await badge('ready').waitFor();

    const history = page.getByTestId('history-table');
    await history.locator('tbody tr').nth(1).waitFor({ timeout: 10_000 });
    const diff = page.getByTestId('state-diff');
    const changed = diff.locator('tr.diff-changed');
    await changed.first().waitFor();
    assert.equal(await changed.count(), 1, 'only greeting changed');
    assert.match(await changed.innerText(), /greeting[\s\S]*changed[\s\S]*"hello"[\s\S]*"hi there"/);

    // Against the empty state every key is an addition.
    await page.getByRole('combobox', { name: 'From' }).selectOption('');
    await diff.locator('tr.diff-added').nth(2).waitFor();
    assert.deepEqual(await diff.locator('tr.diff-added td:first-child').allInnerTexts(), [
      'greeting',
      'motd.by',
      'motd.lines',
    ]);
    await shot(page, '11-history-diff');
  });

  it('locks on a failing run, shows the failed step, and unlocks; unlock and retry starts the failed operation again', async () => {
    const form = page.getByRole('form', { name: 'Run an operation' });
    await form.getByLabel('Operation').fill('create');
    // The raw JSON is one click away, holding what the fields hold.
    await page.waitForFunction(
      () => (document.querySelector('[name="input-greeting"]') as HTMLInputElement | null)?.value === 'hi there',
    );
    await form.getByRole('button', { name: 'Edit as JSON' }).click();
    assert.deepEqual(JSON.parse(await form.getByLabel('Input (JSON)').inputValue()), { root, greeting: 'hi there' });
    await form.getByLabel('Input (JSON)').fill(input({ greeting: 'bye', dir: '/proc/keeper-nope' }));
    await form.getByRole('button', { name: 'Run' }).click();
    await badge('error_locked').waitFor({ timeout: 60_000 });
    const steps = page.getByTestId('run-steps');
    await steps
      .locator('.badge', { hasText: /^failed$/ })
      .first()
      .waitFor();
    assert.match(await page.getByTestId('current-state').innerText(), /hi there/, 'nothing was committed');
    await shot(page, '12-incarnation-locked');

    const failedRun = (await api(k, 'GET', '/v1/incarnations/motd-ui')).body.apply_id as string;
    await page.getByRole('button', { name: 'Unlock and retry' }).click();
    // The retry is a new run of the same failing input; the page switches to its report.
    const retryRegion = page.getByRole('region', { name: /^Run motd-ui\.create\./ });
    await page.waitForFunction(
      (old) => {
        const r = document.querySelector('section.run-report');
        return r !== null && !(r.getAttribute('aria-label') ?? '').endsWith(old);
      },
      failedRun,
      { timeout: 20_000 },
    );
    const retryRun = (await retryRegion.getAttribute('aria-label'))!.slice('Run '.length);
    await badge('error_locked').waitFor({ timeout: 60_000 });
    const after = (await api(k, 'GET', '/v1/incarnations/motd-ui')).body;
    assert.equal(after.apply_id, retryRun, 'the page shows the retry run, which is the latest');
    assert.notEqual(retryRun, failedRun);

    await page.getByRole('button', { name: 'Unlock', exact: true }).click();
    await badge('ready').waitFor({ timeout: 20_000 });
    assert.equal(
      await page.getByRole('button', { name: 'Unlock', exact: true }).count(),
      0,
      'the unlock buttons are gone',
    );
    assert.deepEqual((await api(k, 'GET', '/v1/incarnations/motd-ui')).body.state.greeting, 'hi there');
    await shot(page, '13-incarnation-unlocked');
  });

  it('shows the version it runs with, and a newer published version with the button that upgrades to it', async () => {
    const version = page.getByTestId('version');
    await version.filter({ hasText: /Version v1 \(state schema 1\)/ }).waitFor();
    assert.equal(await version.getByRole('button').count(), 0, 'no upgrade offered while v1 is the newest');
    assert.equal((await api(k, 'POST', '/v1/services/motd/versions', { ref: 'v2' })).status, 201);
    await version.getByText('v2 is published').waitFor({ timeout: 10_000 });
    await shot(page, '14-newer-version');
    await version.getByRole('button', { name: 'Upgrade to v2' }).click();
    await version.filter({ hasText: /Version v2 / }).waitFor({ timeout: 60_000 });
    await badge('ready').waitFor({ timeout: 60_000 });
    assert.equal(await version.getByRole('button').count(), 0, 'nothing newer than v2');
    const inc = (await api(k, 'GET', '/v1/incarnations/motd-ui')).body;
    assert.deepEqual([inc.version, inc.newer_version, inc.last_run.operation], ['v2', null, 'upgrade']);
  });

  it('a viewer sees the incarnation without a control: no run or plan form, each place saying why', async () => {
    const token = await operatorToken(k, 'vera', 'viewer');
    const v = await newPage(browser, k.baseUrl);
    try {
      await signIn(v.page, token, { stayOnOverview: true });
      await v.page.goto('/ui/incarnations/motd-ui');
      await v.page.getByTestId('current-state').waitFor();
      for (const permission of ['incarnations:run', 'incarnations:plan'])
        await v.page.locator(`[data-testid="not-granted"][data-permission="${permission}"]`).waitFor();
      assert.equal(await v.page.getByRole('form', { name: 'Run an operation' }).count(), 0);
      assert.equal(await v.page.getByRole('form', { name: 'Make a plan' }).count(), 0);
      assert.equal(await v.page.getByRole('button', { name: /Upgrade|Unlock/ }).count(), 0);
      assert.equal(await v.page.title(), 'Incarnation motd-ui · Keeper');
      await shot(v.page, '15-viewer-incarnation');
    } finally {
      await v.context.close();
    }
  });
});
