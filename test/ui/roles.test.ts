// Every write control reads the signed-in operator's permissions (issue 52, item 4), in headless
// Chromium against a real keeper: a viewer sees the souls, services, incarnations and "Run a module"
// pages without a single write form, each form's place naming the role and the permission it
// lacks; a responder sees exactly the forms its role grants (souls and executions, not services or
// incarnations). The keeper still refuses the calls (test/api/roles covers the server side).
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { operatorToken } from '../api/helpers';
import { launch, newPage, shot, signIn } from './browser';

interface PageCase {
  path: string;
  heading: string;
  form: string;
  permission: string;
}

const PAGES: PageCase[] = [
  { path: '/ui/souls', heading: 'Souls', form: 'Register a soul', permission: 'souls:create' },
  { path: '/ui/services', heading: 'Services', form: 'Register a service', permission: 'services:create' },
  {
    path: '/ui/incarnations',
    heading: 'Incarnations',
    form: 'Create an incarnation',
    permission: 'incarnations:create',
  },
  { path: '/ui/executions', heading: 'Run a module', form: 'Start an execution', permission: 'executions:run' },
];

describe('web UI: controls follow the role', function () {
  this.timeout(180_000);
  let tk: TestKeeper;
  let browser: Browser;
  const tokens: Record<string, string> = {};

  before(async () => {
    tk = await startTestKeeper();
    tokens.viewer = await operatorToken(tk, 'vera', 'viewer');
    tokens.responder = await operatorToken(tk, 'rory', 'responder');
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await tk?.stop();
  });

  /** Opens a page and waits until the permissions are known: either the form or the note shows. */
  async function open(page: Page, c: PageCase): Promise<'form' | 'note'> {
    await page.goto(c.path);
    await page.getByRole('heading', { name: c.heading, exact: true }).waitFor();
    const form = page.getByRole('form', { name: c.form });
    const note = page.locator(`[data-testid="not-granted"][data-permission="${c.permission}"]`);
    await form.or(note).first().waitFor();
    return (await form.count()) > 0 ? 'form' : 'note';
  }

  for (const [role, granted] of [
    ['viewer', []],
    ['responder', ['souls:create', 'executions:run']],
  ] as const) {
    it(`a ${role} sees only the forms its role grants, and why the others are not there`, async () => {
      const { context, page } = await newPage(browser, tk.baseUrl);
      try {
        await signIn(page, tokens[role]!, { stayOnOverview: true });
        for (const c of PAGES) {
          const shown = await open(page, c);
          const expected = (granted as readonly string[]).includes(c.permission) ? 'form' : 'note';
          assert.equal(shown, expected, `${role} on ${c.path}`);
          if (expected === 'note') {
            const text = await page.getByTestId('not-granted').first().innerText();
            assert.match(text, new RegExp(`Your role \\(${role}\\) may not .* \\(needs ${c.permission}\\)`));
            assert.equal(await page.getByRole('form', { name: c.form }).count(), 0);
          }
        }
        await shot(page, `roles-${role}-executions`);
      } finally {
        await context.close();
      }
    });
  }
});
