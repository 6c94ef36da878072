// The UI's session across tabs and links (issue 52, item 1) in headless Chromium against a real
// keeper: a deep link opened before signing in returns there after it; a link opened in a new tab
// of the same browser needs no second sign-in, while another browser profile still asks; signing
// out in one tab signs out every tab; an expired token is not handed to a new tab; a `?next=` that
// leaves the UI is ignored; every page's title names the page.
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { issueOperatorToken } from '../../api/jwt';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { launch, newPage, recordUrls } from './browser';

describe('web UI: the session across tabs and links', function () {
  this.timeout(120_000);
  let tk: TestKeeper;
  let browser: Browser;

  before(async () => {
    tk = await startTestKeeper();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await tk?.stop();
  });

  const fillToken = async (page: import('playwright-core').Page, token: string) => {
    await page.getByLabel('Operator token (JWT)').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };

  it('a deep link opened signed out returns to that page after signing in; its title names it', async () => {
    const { context, page } = await newPage(browser, tk.baseUrl);
    const urls = recordUrls(page);
    try {
      await page.goto('/ui/operators');
      await page.waitForURL('**/ui/signin?next=%2Fui%2Foperators');
      assert.equal(await page.title(), 'Sign in · Keeper');
      await fillToken(page, tk.adminToken);
      await page.getByRole('heading', { name: 'Operators' }).waitFor();
      assert.equal(new URL(page.url()).pathname, '/ui/operators');
      assert.equal(await page.title(), 'Operators · Keeper');
      assert.ok(
        urls.every((u) => !u.includes(tk.adminToken)),
        'the token is in no URL',
      );
    } finally {
      await context.close();
    }
  });

  it('a link opened in a new tab of the same browser needs no sign-in; another profile still asks', async () => {
    const { context, page } = await newPage(browser, tk.baseUrl);
    const other = await newPage(browser, tk.baseUrl);
    try {
      await page.goto('/ui/');
      await fillToken(page, tk.adminToken);
      await page.getByRole('heading', { name: 'Overview' }).waitFor();

      const tab = await context.newPage();
      await tab.goto('/ui/activity');
      await tab.getByRole('heading', { name: 'Activity' }).waitFor();
      assert.equal(new URL(tab.url()).pathname, '/ui/activity');
      assert.equal(await tab.title(), 'Activity · Keeper');
      assert.equal(await tab.evaluate(() => sessionStorage.getItem('keeper.token')), tk.adminToken);
      assert.equal(await tab.evaluate(() => localStorage.length), 0, 'nothing in local storage');

      await other.page.goto('/ui/activity');
      await other.page.waitForURL('**/ui/signin?next=%2Fui%2Factivity');

      // Signing out in the new tab signs out the first one too, with the reason.
      await tab.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL('**/ui/signin**');
      await page.getByTestId('signin-reason').filter({ hasText: 'signed out in another tab' }).waitFor();
      assert.equal(await page.evaluate(() => sessionStorage.getItem('keeper.token')), null);
      assert.equal(await tab.evaluate(() => sessionStorage.getItem('keeper.token')), null);

      // And a tab opened after that asks for a sign-in: nobody holds the session any more.
      const late = await context.newPage();
      await late.goto('/ui/souls');
      await late.waitForURL('**/ui/signin?next=%2Fui%2Fsouls');
    } finally {
      await context.close();
      await other.context.close();
    }
  });

  it('an expired token is not handed to a new tab; the same tab with a live token is', async () => {
    const { token: expired } = await issueOperatorToken(
      tk.keeper.runtime.signingKey,
      tk.config.auth.jwt.issuer,
      'admin',
      'cluster-admin',
      1,
    );
    await new Promise((r) => setTimeout(r, 1500));
    const { context, page } = await newPage(browser, tk.baseUrl);
    try {
      await page.goto('/ui/');
      await fillToken(page, tk.adminToken);
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      // The holding tab parks on the sign-in page, which calls nothing, so no 401 drops its token
      // first: what it holds is what it would hand out between its token's expiry and its next call.
      await page.goto('/ui/signin');
      await page.evaluate((t) => sessionStorage.setItem('keeper.token', t), expired);
      const tab = await context.newPage();
      await tab.goto('/ui/activity');
      await tab.waitForURL('**/ui/signin?next=%2Fui%2Factivity');
      assert.equal(await tab.evaluate(() => sessionStorage.getItem('keeper.token')), null);

      await page.evaluate((t) => sessionStorage.setItem('keeper.token', t), tk.adminToken);
      const live = await context.newPage();
      await live.goto('/ui/activity');
      await live.getByRole('heading', { name: 'Activity' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('a ?next= outside the UI is ignored: signing in lands on the overview', async () => {
    for (const next of ['//evil.example/ui', 'https://evil.example/', '/\\evil.example', '/uix', '/ui/signin']) {
      const { context, page } = await newPage(browser, tk.baseUrl);
      try {
        await page.goto(`/ui/signin?next=${encodeURIComponent(next)}`);
        await fillToken(page, tk.adminToken);
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        assert.equal(new URL(page.url()).origin, new URL(tk.baseUrl).origin, next);
        assert.equal(new URL(page.url()).pathname, '/ui/', next);
      } finally {
        await context.close();
      }
    }
  });
});
