// The operator lifecycle over MCP (issue 31) against a real keeper: list-archons, set-archon-role,
// revoke-archon-tokens and delete-archon act on the same registry as the API, with its permissions,
// and what they do is felt by the operator's next request (checked through the REST door).
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TestKeeper } from '../support/keeper';
import { clientFor, operatorToken } from '../api/helpers';
import { callTool } from './client';
import { startMcpKeeper, type McpKeeper } from './keeper';

describe('MCP listener: operator lifecycle tools', function () {
  this.timeout(120_000);
  let mk: McpKeeper;
  let tk: TestKeeper;
  let admin: Client;
  let viewer: Client;

  before(async () => {
    mk = await startMcpKeeper();
    ({ tk, admin } = mk);
    viewer = await mk.as('vera', 'viewer');
  });
  after(async () => {
    await mk?.stop();
  });

  it('list-archons shows the operators with their roles, to a viewer too', async () => {
    const list = await callTool(viewer, 'list-archons');
    assert.equal(list.isError, false, list.text);
    const vera = list.data.items.find((a: { aid: string }) => a.aid === 'vera');
    assert.equal(vera.role, 'viewer');
    assert.ok(vera.permissions.includes('archons:read'));
  });

  it('set-archon-role changes the role for the next request; a viewer is refused naming archons:update', async () => {
    const token = await operatorToken(tk, 'otto', 'viewer');
    const denied = await callTool(viewer, 'set-archon-role', { aid: 'otto', role: 'cluster-admin' });
    assert.match(denied.text, /^403 Forbidden: .*lacks the permission archons:update/);
    assert.equal((await clientFor(tk)('GET', '/v1/archons/otto')).body.role, 'viewer', 'nothing changed');
    const set = await callTool(admin, 'set-archon-role', { aid: 'otto', role: 'responder' });
    assert.equal(set.isError, false, set.text);
    assert.equal(set.data.role, 'responder');
    const asOtto = clientFor(tk, token);
    const reg = await asOtto('POST', '/v1/souls', {
      body: { sid: 'otto-1.example.com', transport: 'agent', covens: ['web'] },
    });
    assert.equal(reg.status, 201, reg.text + ': the responder role (souls:*) holds with the token issued as a viewer');
    const bad = await callTool(admin, 'set-archon-role', { aid: 'otto', role: 'wizard' });
    assert.equal(bad.isError, true);
    assert.match(bad.text, /\/arguments\/role/);
  });

  it("revoke-archon-tokens refuses the operator's tokens from its next request; a viewer is refused naming archons:revoke-tokens", async () => {
    const token = await operatorToken(tk, 'rita', 'viewer');
    const asRita = clientFor(tk, token);
    assert.equal((await asRita('GET', '/v1/souls')).status, 200);
    const denied = await callTool(viewer, 'revoke-archon-tokens', { aid: 'rita' });
    assert.match(denied.text, /^403 Forbidden: .*lacks the permission archons:revoke-tokens/);
    assert.equal((await asRita('GET', '/v1/souls')).status, 200, 'a refused revoke revokes nothing');
    const rev = await callTool(admin, 'revoke-archon-tokens', { aid: 'rita' });
    assert.equal(rev.isError, false, rev.text);
    assert.equal(typeof rev.data.tokens_valid_after, 'string');
    assert.equal((await asRita('GET', '/v1/souls')).status, 401);
  });

  it('delete-archon removes the operator; a viewer is refused naming archons:delete', async () => {
    const token = await operatorToken(tk, 'dora', 'viewer');
    const asDora = clientFor(tk, token);
    const denied = await callTool(viewer, 'delete-archon', { aid: 'dora' });
    assert.match(denied.text, /^403 Forbidden: .*lacks the permission archons:delete/);
    assert.equal((await asDora('GET', '/v1/souls')).status, 200);
    const del = await callTool(admin, 'delete-archon', { aid: 'dora' });
    assert.equal(del.isError, false, del.text);
    assert.equal(del.text, 'done (204, nothing to show)');
    assert.equal((await asDora('GET', '/v1/souls')).status, 401);
    assert.equal((await clientFor(tk)('GET', '/v1/archons/dora')).status, 404);
  });
});
