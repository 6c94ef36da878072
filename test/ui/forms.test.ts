// The run and plan forms built from the operation's input schema (issue 35), and the failure budget
// on the incarnation page (issue 30), against a real keeper with its Temporal workers, the real
// secrets store and two real souls (fixture service test/fixtures/services/forms: a list, a number
// with a default, a checkbox and a secret token). A run started from the generated fields reaches
// the hosts with exactly that input, the secret kept by the keeper only as a reference; a plan made
// from fields prefilled with the last input sends an emptied field as "back to its default"; a run
// with one host stopped: a budget of 0 from the form locks, the scenario's
// `max_failed: 1` commits and the page lists the host pending.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { TestKeeper } from '../support/keeper';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import { repoRoot } from '../support/repo';
import { waitForStatus } from '../agents/harness';
import { launch, newPage, shot, signIn } from './browser';

describe('web UI: run and plan forms from the input schema, pending hosts', function () {
  this.timeout(300_000);
  const FIRST = `first-token-${randomBytes(8).toString('hex')}`;
  const SECOND = `second-token-${randomBytes(8).toString('hex')}`;
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[] = [];
  let browser: Browser;
  let page: Page;
  let close: () => Promise<void>;
  const file = (s: TestSoul, name: string) => fs.readFileSync(path.join(root, s.sid, name), 'utf8');
  const badge = (status: string) => page.locator('h2 .badge', { hasText: new RegExp(`^${status}$`) });
  const inc = async () => (await api(k, 'GET', '/v1/incarnations/app')).body;
  const runOf = async (applyId: string) => (await api(k, 'GET', `/v1/incarnations/app/runs/${applyId}`)).body;

  before(async () => {
    root = tempDir('ui-forms-');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'forms'),
      path.join(root, 'forms.git'),
      'v1',
    );
    k = await startRunKeeper();
    souls = (await startSouls(k, path.join(root, 'souls'), [['app'], ['app']])).sort((a, b) =>
      a.sid.localeCompare(b.sid),
    );
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'forms', git: url, ref: 'v1' })).status, 201);
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'app',
      service: 'forms',
      covens: ['app'],
      input: { root, api_token: FIRST },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settled(k, 'app', 120_000)).status, 'ready');
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

  const openIncarnation = async () => {
    await page.goto('/ui/incarnations/app');
    await badge('ready').waitFor({ timeout: 60_000 });
  };

  it('starts a run from the generated fields with a list and a secret input; the keeper keeps the secret as a reference', async () => {
    await openIncarnation();
    const before = await inc();
    const firstRef = (await runOf(before.apply_id)).input.api_token as string;
    assert.match(firstRef, /^secretstore:.+#api_token$/);

    const form = page.getByRole('form', { name: 'Run an operation' });
    const field = (n: string) => form.locator(`[name="input-${n}"]`);
    await form.getByLabel('Operation').fill('create');
    await field('root').waitFor();
    // Prefilled with the last input: the secret only as the reference the keeper stored.
    await page.waitForFunction(
      (r) =>
        (document.querySelector('form[aria-label="Run an operation"] [name="input-root"]') as HTMLInputElement)
          ?.value === r,
      root,
    );
    assert.equal(await field('api_token').getAttribute('type'), 'password');
    assert.equal(await field('api_token').inputValue(), firstRef);
    assert.equal(await field('upstreams').evaluate((e) => e.tagName), 'TEXTAREA');
    assert.match((await field('upstreams').getAttribute('placeholder')) ?? '', /default: \["a\.example"\]/);
    assert.equal(await field('port').getAttribute('type'), 'number');
    assert.equal(await field('verbose').getAttribute('type'), 'checkbox');

    // A required input left empty is refused before anything is sent, naming the input.
    await field('root').fill('');
    await form.getByRole('button', { name: 'Run' }).click();
    await form.getByRole('alert').filter({ hasText: 'input root: required' }).waitFor();
    assert.equal((await inc()).apply_id, before.apply_id, 'no run was started');

    await field('root').fill(root);
    await field('port').fill('8080');
    await field('upstreams').fill('b.example\nc.example');
    await field('verbose').check();
    await field('api_token').fill(SECOND);
    await shot(page, '40-run-form-generated');
    await form.getByRole('button', { name: 'Run' }).click();
    await page.getByTestId('current-state').filter({ hasText: 'c.example' }).waitFor({ timeout: 60_000 });
    await badge('ready').waitFor({ timeout: 60_000 });

    const after = await inc();
    assert.notEqual(after.apply_id, before.apply_id);
    const run = await runOf(after.apply_id);
    assert.equal(run.status, 'succeeded');
    const { api_token: ref, ...rest } = run.input;
    assert.deepEqual(rest, { root, port: 8080, upstreams: ['b.example', 'c.example'], verbose: true });
    assert.match(ref, /^secretstore:.+#api_token$/, 'the secret is kept as a reference');
    assert.notEqual(ref, firstRef, 'the new value was stored as a new secret');
    assert.deepEqual(after.state, { port: 8080, upstreams: ['b.example', 'c.example'], verbose: true });
    for (const s of souls) {
      assert.equal(file(s, 'app.conf'), 'port=8080\nverbose=true\n');
      assert.equal(file(s, 'token'), `token=${SECOND}\n`, 'the value reached the hosts');
    }
    const report = await api(k, 'GET', `/v1/incarnations/app/runs/${after.apply_id}`);
    assert.ok(!JSON.stringify(report.body).includes(SECOND), 'the value is not in the run');
    // Once the page has read the new run, the field shows the reference again, never the value.
    await page.reload();
    await form.getByLabel('Operation').fill('create');
    await page.waitForFunction(
      (r) =>
        (document.querySelector('form[aria-label="Run an operation"] [name="input-api_token"]') as HTMLInputElement)
          ?.value === r,
      ref,
    );
    assert.ok(!(await page.content()).includes(SECOND), 'the value is nowhere on the page');
  });

  it('makes a plan from generated fields prefilled with the last input; an emptied field goes back to its default', async () => {
    await openIncarnation();
    const form = page.getByRole('form', { name: 'Make a plan' });
    const field = (n: string) => form.locator(`[name="input-${n}"]`);
    await form.locator('select[name="plan-operation"]').waitFor({ timeout: 10_000 });
    assert.equal(await form.getByLabel('Operation').inputValue(), 'create', "the last run's operation");
    await page.waitForFunction(
      () =>
        (document.querySelector('form[aria-label="Make a plan"] [name="input-port"]') as HTMLInputElement)?.value ===
        '8080',
    );
    assert.equal(await field('upstreams').inputValue(), 'b.example\nc.example');
    assert.equal(await field('verbose').isChecked(), true);
    const lastRef = (await runOf((await inc()).apply_id)).input.api_token;
    assert.equal(await field('api_token').inputValue(), lastRef);

    await field('port').fill('');
    await field('upstreams').fill('d.example');
    // The raw JSON is one click away and holds what the fields hold: the emptied port as null.
    await form.getByRole('button', { name: 'Edit as JSON' }).click();
    assert.deepEqual(JSON.parse(await form.getByLabel('Input (JSON)').inputValue()), {
      root,
      port: null,
      upstreams: ['d.example'],
      verbose: true,
      api_token: lastRef,
    });
    await form.getByRole('button', { name: 'Edit as fields' }).click();
    assert.equal(await field('upstreams').inputValue(), 'd.example');
    await shot(page, '41-plan-form-generated');
    await form.getByRole('button', { name: 'Plan' }).click();
    await page.waitForURL('**/ui/incarnations/app/plans/**');
    await page.getByRole('button', { name: 'Apply this plan' }).waitFor({ timeout: 60_000 });
    const planId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);

    const plan = (await api(k, 'GET', `/v1/incarnations/app/plans/${planId}`)).body;
    assert.deepEqual(plan.input, { root, upstreams: ['d.example'], verbose: true, api_token: lastRef });
    // The plan's diff is the default port coming back, on every host; nothing changed yet.
    const hosts = page.getByTestId('plan-hosts');
    for (const s of souls) {
      const diff = hosts.locator(`section.plan-host[data-sid="${s.sid}"]`).getByTestId('unified-diff');
      await diff.first().waitFor();
      assert.deepEqual(await diff.locator('.line.del').allInnerTexts(), ['-port=8080']);
      assert.deepEqual(await diff.locator('.line.add').allInnerTexts(), ['+port=80']);
      assert.equal(file(s, 'app.conf'), 'port=8080\nverbose=true\n');
    }
  });

  it('takes a failure budget in the run form and lists the hosts a run left pending', async () => {
    const down = souls[1]!;
    await down.run.kill();
    await waitForStatus(k, down.sid, 'disconnected', 20_000);
    await openIncarnation();
    assert.equal(await page.getByTestId('pending-hosts').count(), 0, 'nothing pending yet');
    const before = await inc();
    const form = page.getByRole('form', { name: 'Run an operation' });
    await form.getByLabel('Operation').fill('create');
    await page.waitForFunction(
      () =>
        (document.querySelector('form[aria-label="Run an operation"] [name="input-port"]') as HTMLInputElement)
          ?.value === '8080',
    );
    await form.locator('[name="input-upstreams"]').fill('e.example');

    // More than the scenario's `max_failed: 1` is the keeper's 400 naming the field; nothing starts.
    await form.getByLabel('Failure budget (max_failed)').fill('2');
    await form.getByRole('button', { name: 'Run' }).click();
    const refused = form.getByRole('alert').filter({ hasText: '/body/max_failed' });
    await refused.waitFor();
    assert.match(await refused.innerText(), /at most the scenario's max_failed/);
    assert.equal((await inc()).apply_id, before.apply_id, 'no run was started');

    // A lower budget is the operator's for this run: 0 with one host stopped locks, nothing committed.
    await form.getByLabel('Failure budget (max_failed)').fill('0');
    await form.getByRole('button', { name: 'Run' }).click();
    await badge('error_locked').waitFor({ timeout: 120_000 });
    const locked = await inc();
    // A budget of 0 is the default's wording (no budget to be over): the hosts counted, nothing committed.
    assert.match(locked.last_run.error, /^0 host\(s\) failed, 1 unknown; nothing was committed$/);
    assert.deepEqual(locked.state.upstreams, ['b.example', 'c.example'], 'nothing was committed');
    await page.getByRole('button', { name: 'Unlock', exact: true }).click();
    await badge('ready').waitFor({ timeout: 20_000 });

    // Left empty, the scenario's budget (1) applies: the run commits and leaves the stopped host pending.
    await form.getByLabel('Failure budget (max_failed)').fill('');
    await form.getByRole('button', { name: 'Run' }).click();
    const pending = page.getByTestId('pending-hosts');
    await pending.locator(`tr[data-sid="${down.sid}"]`).waitFor({ timeout: 120_000 });
    await badge('ready').waitFor({ timeout: 60_000 });
    await shot(page, '42-pending-hosts');

    const after = await inc();
    assert.equal(after.status, 'ready');
    assert.deepEqual(after.state.upstreams, ['e.example'], 'the run committed');
    assert.deepEqual(
      after.pending_hosts.map((h: { sid: string; status: string; apply_id: string }) => [h.sid, h.status, h.apply_id]),
      [[down.sid, 'unknown', after.apply_id]],
    );
    const row = pending.locator(`tr[data-sid="${down.sid}"]`);
    assert.match(await row.innerText(), /unknown/);
    assert.equal(await row.getByRole('link').innerText(), after.apply_id);
    assert.equal(await pending.locator('tbody tr').count(), 1, 'only the stopped host is pending');
  });
});
