// The catalog's take-back tools over MCP (issue 31, "Remove and revoke") against a real keeper:
// yank-service-version and delete-service act on the same catalog as the API, with its permissions.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TestKeeper } from '../support/keeper';
import { serviceRepo } from '../support/service-repo';
import { clientFor } from '../api/helpers';
import { callTool } from './client';
import { startMcpKeeper, type McpKeeper } from './keeper';

describe('MCP listener: yank-service-version and delete-service', function () {
  this.timeout(120_000);
  let mk: McpKeeper;
  let tk: TestKeeper;
  let admin: Client;
  let viewer: Client;

  before(async () => {
    mk = await startMcpKeeper();
    ({ tk, admin } = mk);
    viewer = await mk.as('vera', 'viewer');
    const repo = serviceRepo({ tags: ['v1', 'v2'] });
    assert.equal(
      (await callTool(admin, 'register-service', { name: 'shop', git: repo.url, ref: 'v1' })).isError,
      false,
    );
    assert.equal((await callTool(admin, 'publish-service-version', { name: 'shop', ref: 'v2' })).isError, false);
  });
  after(async () => {
    await mk?.stop();
  });

  it('yank-service-version withdraws a version with its reason; a viewer is refused naming services:yank; a second yank is a conflict', async () => {
    const denied = await callTool(viewer, 'yank-service-version', { name: 'shop', version: 'v2', reason: 'broken' });
    assert.equal(denied.isError, true);
    assert.match(denied.text, /^403 Forbidden: .*lacks the permission services:yank/);
    const y = await callTool(admin, 'yank-service-version', { name: 'shop', version: 'v2', reason: 'broken' });
    assert.equal(y.isError, false, y.text);
    assert.equal(y.data.yanked.reason, 'broken');
    const rest = await clientFor(tk)('GET', '/v1/services/shop/versions/v2');
    assert.equal(rest.body.yanked.reason, 'broken', 'the API shows what the tool did');
    const again = await callTool(admin, 'yank-service-version', { name: 'shop', version: 'v2', reason: 'twice' });
    assert.match(again.text, /^409 Conflict: .*yanked already.*: broken$/);
    const noReason = await callTool(admin, 'yank-service-version', { name: 'shop', version: 'v1' });
    assert.equal(noReason.isError, true);
    assert.match(noReason.text, /\/arguments\/reason/);
  });

  it('delete-service removes an unused service; a viewer is refused naming services:delete', async () => {
    const denied = await callTool(viewer, 'delete-service', { name: 'shop' });
    assert.match(denied.text, /^403 Forbidden: .*lacks the permission services:delete/);
    const del = await callTool(admin, 'delete-service', { name: 'shop' });
    assert.equal(del.isError, false, del.text);
    assert.equal(del.text, 'done (204, nothing to show)');
    assert.equal((await clientFor(tk)('GET', '/v1/services/shop')).status, 404);
    assert.match(
      (await callTool(admin, 'delete-service', { name: 'shop' })).text,
      /^404 Not Found: service shop is not in the catalog/,
    );
  });
});
