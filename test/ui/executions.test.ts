// The /ui execution form and live result page (issue 34) in headless Chromium against a real keeper
// and real souls: the module picker offers what the role may run, the selection is counted live as
// the target is typed (and a bad `where` is named), a command runs on a coven and the result page
// shows each host, the answers grouped by identical output and the summary; above the threshold the
// form asks for a confirmation before anything starts. Screenshots go to test-results/ui/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { clientFor, operatorToken } from '../api/helpers';
import { startRunKeeper, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import type { TestKeeper } from '../support/keeper';
import { launch, newPage, shot, signIn } from './browser';

describe('web UI: run a module on selected hosts', function () {
  this.timeout(180_000);
  let k: TestKeeper;
  let browser: Browser;
  let root: string;
  let souls: TestSoul[];

  before(async () => {
    root = tempDir('ui-exec-');
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['uiweb'], ['uiweb'], ['uidb']]);
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await Promise.all((souls ?? []).map((s) => s.run.kill()));
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const openForm = async (page: Page, token: string) => {
    await signIn(page, token, { stayOnOverview: true });
    await page.locator('header.top nav').getByRole('link', { name: 'Run a module' }).click();
    await page.getByRole('heading', { name: 'Run a module' }).waitFor();
  };
  const selection = (page: Page, text: string | RegExp) =>
    page.getByTestId('selection').filter({ hasText: text }).waitFor();

  it('counts the selection live, runs a command on a coven and shows each host, output groups and the summary', async () => {
    const { context, page } = await newPage(browser, k.baseUrl);
    try {
      await openForm(page, k.adminToken);
      const form = page.getByRole('region', { name: 'Run a module' });
      await form.getByLabel('Module').selectOption('core.cmd.run');
      await selection(page, 'name covens, SIDs or a where');
      await form.getByLabel('Covens').fill('uiweb');
      await selection(page, '2 hosts selected');
      const [a, b] = [souls[0]!.sid, souls[1]!.sid].sort();
      // The where narrows the coven, counted from the stored facts.
      await form.getByLabel('Where').fill(`soulprint.self.hostname == "${a}"`);
      await selection(page, `1 host selected: ${a}`);
      await form.getByLabel('Where').fill('soulprint.self.hostname ==');
      await selection(page, /target\.where/);
      await form.getByLabel('Where').fill('');
      await selection(page, `2 hosts selected: ${a}, ${b}`);
      await shot(page, 'exec-01-form');

      await form.getByLabel('Parameters (JSON)').fill('{"argv": ["echo", "same"]}');
      await form.getByRole('button', { name: 'Run' }).click();
      await page.waitForURL(/\/ui\/executions\/[a-z0-9]+-[0-9a-f]{8}$/);
      await page.getByTestId('summary').filter({ hasText: 'ok 0, changed 2, failed 0, unknown 0' }).waitFor();
      const rows = page.getByRole('table', { name: 'Hosts' }).locator('tbody tr');
      assert.equal(await rows.count(), 2);
      for (const sid of [a, b]) assert.match(await rows.filter({ hasText: sid }).innerText(), /changed/);
      // Identical answers are one group with their count.
      const groups = page.getByTestId('output-group');
      assert.equal(await groups.count(), 1);
      assert.match(await groups.innerText(), /^2 hosts changed \(.+\)\s+ran echo, exit 0[\s\S]*same/);
      await shot(page, 'exec-02-result');

      // What the page started is what the API recorded; the other coven was not asked.
      const id = decodeURIComponent(page.url().split('/').pop()!);
      const e = await clientFor(k)('GET', `/v1/executions/${id}`);
      assert.deepEqual(e.body.target, { covens: ['uiweb'] });
      assert.deepEqual(e.body.params, { argv: ['echo', 'same'] });
      assert.deepEqual(e.body.hosts.map((h: any) => h.sid).sort(), [a, b]);
    } finally {
      await context.close();
    }
  });

  it('asks for a confirmation above the threshold, then shows hosts without a connected soul as unknown', async () => {
    const api = clientFor(k);
    for (let i = 0; i < 11; i++)
      assert.equal(
        (
          await api('POST', '/v1/souls', {
            body: { sid: `ui-idle-${i}.exec.example.com`, transport: 'agent', covens: ['uiidle'] },
          })
        ).status,
        201,
      );
    const { context, page } = await newPage(browser, k.baseUrl);
    try {
      await openForm(page, k.adminToken);
      const form = page.getByRole('region', { name: 'Run a module' });
      await form.getByLabel('Module').selectOption('core.cmd.run');
      await form.getByLabel('Parameters (JSON)').fill('{"argv": ["true"]}');
      await form.getByLabel('Covens').fill('uiidle');
      await selection(page, '11 hosts selected');
      const confirm = form.getByLabel('Run on 11 hosts (more than 10)');
      await confirm.waitFor();
      // Unchecked, the browser does not send the form: nothing starts.
      await form.getByRole('button', { name: 'Run' }).click();
      assert.equal(await confirm.evaluate((el) => (el as HTMLInputElement).validity.valueMissing), true);
      assert.match(page.url(), /\/ui\/executions$/);
      await confirm.check();
      await form.getByRole('button', { name: 'Run' }).click();
      await page.waitForURL(/\/ui\/executions\/[a-z0-9]+-[0-9a-f]{8}$/);
      await page.getByTestId('summary').filter({ hasText: 'ok 0, changed 0, failed 0, unknown 11' }).waitFor();
      const groups = page.getByTestId('output-group');
      assert.equal(await groups.count(), 1);
      assert.match(await groups.innerText(), /^11 hosts unknown[\s\S]*not connected/);
      await shot(page, 'exec-03-unknown');
    } finally {
      await context.close();
    }
  });

  it("offers only the modules of the operator's role", async () => {
    const responder = await operatorToken(k, 'ui-responder', 'responder');
    const { context, page } = await newPage(browser, k.baseUrl);
    try {
      await openForm(page, responder);
      const options = page.getByLabel('Module').locator('option');
      await options.first().waitFor({ state: 'attached' });
      const offered = await options.allInnerTexts();
      assert.ok(offered.includes('core.service.restarted'), offered.join(', '));
      assert.ok(!offered.includes('core.cmd.run'), 'a responder may not run core.cmd.run');
    } finally {
      await context.close();
    }
  });
});
