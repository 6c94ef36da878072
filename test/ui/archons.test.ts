// The Operators page (issue 31) in headless Chromium against a real keeper: a cluster-admin reaches it
// from the navigation, changes a role, revokes an operator's tokens (its old token is then refused by
// the keeper), issues a new one that works, sees the keeper's 409 when deleting the last
// cluster-admin (nothing removed) and deletes another operator. A viewer sees the list without a
// single action button, and the keeper still refuses the viewer's call.
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { clientFor, operatorToken } from '../api/helpers';
import { launch, newPage, shot, signIn } from './browser';

describe('web UI: the Operators page', function () {
  this.timeout(180_000);
  let tk: TestKeeper;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let aliceToken: string;
  let veraToken: string;
  const api = (...args: Parameters<ReturnType<typeof clientFor>>) => clientFor(tk)(...args);
  const row = (aid: string) => page.locator(`tr[data-archon="${aid}"]`);
  const confirmIn = async (title: string, button: string) =>
    page.getByRole('dialog', { name: title }).getByRole('button', { name: button }).click();

  before(async () => {
    tk = await startTestKeeper();
    aliceToken = await operatorToken(tk, 'alice', 'operator');
    veraToken = await operatorToken(tk, 'vera', 'viewer');
    assert.equal((await api('POST', '/v1/archons', { body: { aid: 'bob', role: 'operator' } })).status, 201);
    browser = await launch();
    ({ context, page } = await newPage(browser, tk.baseUrl));
    await signIn(page, tk.adminToken);
    await page.locator('header.top nav').getByRole('link', { name: 'Operators', exact: true }).click();
    await page.getByRole('heading', { name: 'Operators' }).waitFor();
    await row('bob').waitFor();
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await tk?.stop();
  });

  it('lists every operator with its role and marks the signed-in one', async () => {
    for (const [aid, role] of [
      ['admin', 'cluster-admin'],
      ['alice', 'operator'],
      ['bob', 'operator'],
      ['vera', 'viewer'],
    ])
      assert.equal(await row(aid).getAttribute('data-role'), role, aid);
    assert.match(await row('admin').innerText(), /admin \(you\)/);
    assert.match(await row('alice').innerText(), /none revoked/);
  });

  it('Change role moves bob to viewer, as the API then answers', async () => {
    const form = row('bob').getByRole('form', { name: 'Role of bob' });
    await form.getByLabel('Role').selectOption('viewer');
    await form.getByRole('button', { name: 'Change role' }).click();
    await page.locator('tr[data-archon="bob"][data-role="viewer"]').waitFor({ timeout: 10_000 });
    assert.equal((await api('GET', '/v1/archons/bob')).body.role, 'viewer');
  });

  it("Revoke tokens makes the keeper refuse alice's token; Issue token shows a new one that works", async () => {
    assert.equal((await clientFor(tk, aliceToken)('GET', '/v1/services')).status, 200);
    await row('alice').getByRole('button', { name: 'Revoke tokens' }).click();
    await confirmIn('Revoke the tokens of alice', 'Revoke tokens');
    await row('alice')
      .getByText(/all revoked \d+s ago/)
      .waitFor({ timeout: 10_000 });
    assert.equal((await clientFor(tk, aliceToken)('GET', '/v1/services')).status, 401);
    assert.ok((await api('GET', '/v1/archons/alice')).body.tokens_valid_after);

    await row('alice').getByRole('button', { name: 'Issue token' }).click();
    const shown = row('alice').getByTestId('token-alice').locator('code.token');
    await shown.waitFor();
    const fresh = (await shown.innerText()).trim();
    assert.notEqual(fresh, aliceToken);
    assert.equal((await clientFor(tk, fresh)('GET', '/v1/services')).status, 200);
  });

  it("Delete on the last cluster-admin shows the keeper's 409 and removes nothing; on bob removes him", async () => {
    await row('admin').getByRole('button', { name: 'Delete' }).click();
    await confirmIn('Delete operator admin', 'Delete');
    const alert = row('admin').getByRole('alert');
    await alert.waitFor();
    assert.match(
      await alert.innerText(),
      /^409 Conflict: operator admin is the last cluster-admin; removing it would leave no one able to manage operators/,
    );
    assert.equal((await api('GET', '/v1/archons/admin')).status, 200, 'nothing removed');
    await shot(page, '75-operators-last-admin');

    await row('bob').getByRole('button', { name: 'Delete' }).click();
    await confirmIn('Delete operator bob', 'Delete');
    await row('bob').waitFor({ state: 'detached', timeout: 10_000 });
    assert.equal((await api('GET', '/v1/archons/bob')).status, 404);
  });

  it('Add an operator creates it with the chosen role', async () => {
    const form = page.getByRole('form', { name: 'Add an operator' });
    await form.getByLabel('AID').fill('carol');
    await form.getByLabel('Role').selectOption('responder');
    await form.getByRole('button', { name: 'Add' }).click();
    await page.locator('tr[data-archon="carol"][data-role="responder"]').waitFor({ timeout: 10_000 });
    assert.equal((await api('GET', '/v1/archons/carol')).body.created_by, 'admin');
  });

  it('a viewer sees the operators but no action, and the keeper refuses the call anyway', async () => {
    const viewer = await newPage(browser, tk.baseUrl);
    try {
      const p = viewer.page;
      await signIn(p, veraToken);
      await p.locator('header.top nav').getByRole('link', { name: 'Operators', exact: true }).click();
      await p.locator('tr[data-archon="admin"]').waitFor();
      assert.match(await p.locator('tr[data-archon="vera"]').innerText(), /vera \(you\)/);
      assert.equal(
        await p
          .locator('tr[data-archon="alice"]')
          .innerText()
          .then((t) => /operator/.test(t)),
        true,
      );
      assert.equal(await p.getByTestId('archons-table').getByRole('button').count(), 0);
      assert.equal(await p.getByTestId('archons-table').locator('select').count(), 0);
      assert.equal(await p.getByRole('form', { name: 'Add an operator' }).count(), 0);
      await shot(p, '76-operators-viewer');
      const refused = await clientFor(tk, veraToken)('DELETE', '/v1/archons/alice');
      assert.equal(refused.status, 403);
      assert.equal((await api('GET', '/v1/archons/alice')).status, 200);
    } finally {
      await viewer.context.close();
    }
  });
});
