// The MCP listener against a real keeper (issue 6, "Checked by"): the SDK's own client lists the
// tools and calls each one; a call without the permission is refused naming it, a request without a
// token is refused before any MCP message is read, and issue-token without force on an active token
// reports the conflict. What the tools do is checked through the REST API, the other door.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { sidSchema } from '../../api/schemas/common';
import { registerSoulBody } from '../../api/schemas/souls';
import { issueOperatorToken } from '../../api/jwt';
import { freePort } from '../support/ports';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { serviceRepo } from '../support/service-repo';
import { clientFor, operatorToken } from '../api/helpers';
import { callTool, connectMcp, mcpUrl } from './client';

describe('MCP listener', function () {
  this.timeout(90_000);
  let tk: TestKeeper;
  let addr: string;
  let admin: Client;

  before(async () => {
    const port = await freePort();
    addr = `127.0.0.1:${port}`;
    tk = await startTestKeeper({
      mutate: (doc) => {
        doc.listen.mcp = { addr };
      },
    });
    admin = await connectMcp(addr, tk.adminToken);
  });
  after(async () => {
    await admin?.close();
    await tk?.stop();
  });

  it('lists the tools with the input schemas of the REST routes they mirror', async () => {
    const { tools } = await admin.listTools();
    const names = tools.map((t) => t.name);
    for (const n of [
      'list-souls',
      'get-soul',
      'register-soul',
      'issue-token',
      'list-services',
      'register-service',
      'list-incarnations',
      'create-incarnation',
      'get-incarnation',
      'get-incarnation-history',
      'run-operation',
      'get-run',
      'unlock',
    ]) {
      assert.ok(names.includes(n), `${n} is listed (got ${names.join(', ')})`);
    }
    const register = tools.find((t) => t.name === 'register-soul')!;
    assert.deepEqual(register.inputSchema.required, registerSoulBody.required);
    assert.deepEqual(register.inputSchema.properties?.sid, sidSchema, 'the sid rule is the API schema itself');
    assert.match(register.description ?? '', /souls:create/);
    const issue = tools.find((t) => t.name === 'issue-token')!;
    assert.deepEqual(Object.keys(issue.inputSchema.properties ?? {}).sort(), ['force', 'sid']);
    assert.equal(tools.find((t) => t.name === 'list-souls')!.annotations?.readOnlyHint, true);
  });

  it('register-soul, get-soul and list-souls act on the same registry as the API', async () => {
    const reg = await callTool(admin, 'register-soul', {
      sid: 'mcp-1.example.com',
      transport: 'agent',
      covens: ['web'],
    });
    assert.equal(reg.isError, false, reg.text);
    assert.match(reg.data.bootstrap_token, /^kbt_/);
    assert.equal(reg.data.status, 'pending');
    const rest = await clientFor(tk)('GET', '/v1/souls/mcp-1.example.com');
    assert.equal(rest.status, 200);
    assert.deepEqual(rest.body.covens, ['web']);

    const got = await callTool(admin, 'get-soul', { sid: 'mcp-1.example.com' });
    assert.equal(got.data.sid, 'mcp-1.example.com');
    const listed = await callTool(admin, 'list-souls', { coven: 'web' });
    assert.deepEqual(
      listed.data.items.map((s: { sid: string }) => s.sid),
      ['mcp-1.example.com'],
    );
    assert.equal(listed.data.next_cursor, null);

    const missing = await callTool(admin, 'get-soul', { sid: 'nobody.example.com' });
    assert.equal(missing.isError, true);
    assert.match(missing.text, /^404 Not Found: soul nobody\.example\.com is not registered/);
  });

  it('issue-token without force on an active token reports the conflict; force: true reissues', async () => {
    const reg = await callTool(admin, 'register-soul', { sid: 'mcp-2.example.com', transport: 'agent', covens: [] });
    const conflict = await callTool(admin, 'issue-token', { sid: 'mcp-2.example.com' });
    assert.equal(conflict.isError, true);
    assert.equal(conflict.data.status, 409);
    assert.match(conflict.text, /^409 Conflict: .*active/i);

    const forced = await callTool(admin, 'issue-token', { sid: 'mcp-2.example.com', force: true });
    assert.equal(forced.isError, false, forced.text);
    assert.match(forced.data.bootstrap_token, /^kbt_/);
    assert.notEqual(forced.data.bootstrap_token, reg.data.bootstrap_token);
  });

  it('register-service and list-services use the catalog', async () => {
    const reg = await callTool(admin, 'register-service', {
      name: 'nginx',
      git: serviceRepo({ tags: ['v1.0.0'] }).url,
      ref: 'v1.0.0',
    });
    assert.equal(reg.isError, false, reg.text);
    assert.equal(reg.data.version, 'v1.0.0');
    const dup = await callTool(admin, 'register-service', {
      name: 'nginx',
      git: 'file:///nowhere/nginx.git',
      ref: 'v2',
    });
    assert.equal(dup.data.status, 409);
    const list = await callTool(admin, 'list-services', { limit: 10 });
    assert.deepEqual(
      list.data.items.map((s: { name: string }) => s.name),
      ['nginx'],
    );
  });

  it('answers invalid arguments with the field and the rule, and changes nothing', async () => {
    const bad = await callTool(admin, 'register-soul', {
      sid: 'not a host',
      transport: 'agent',
      covens: [],
      colour: 'red',
    });
    assert.equal(bad.isError, true);
    assert.equal(bad.data.status, 400);
    assert.ok(
      bad.data.errors.some((e: { path: string }) => e.path === '/arguments/colour'),
      bad.text,
    );
    const sidRule = await callTool(admin, 'register-soul', { sid: 'not a host', transport: 'agent', covens: [] });
    assert.deepEqual(
      sidRule.data.errors.map((e: { path: string }) => e.path),
      ['/arguments/sid'],
    );
    assert.match(sidRule.text, /fully qualified domain name/);
    const souls = await clientFor(tk)('GET', '/v1/souls');
    assert.ok(!souls.text.includes('not a host'));
  });

  it('refuses an argument named __proto__ as invalid params naming it, where the SDK would drop it silently (issue 45)', async () => {
    // Written as text: an object literal's `__proto__` would set a prototype, not send a key.
    const text =
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"register-soul","arguments":' +
      '{"sid":"proto.example.com","transport":"agent","covens":[],"__proto__":{"covens":["admin"]}}}}';
    const r = await fetch(mcpUrl(addr), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${tk.adminToken}`,
      },
      body: text,
    });
    const answer = await r.json();
    assert.equal(answer.id, 7);
    assert.equal(answer.error.code, -32602, JSON.stringify(answer));
    assert.match(answer.error.message, /invalid params: \/arguments\/__proto__ is not a known argument/);
    assert.equal(answer.error.data.errors[0].path, '/arguments/__proto__');
    assert.equal((await clientFor(tk)('GET', '/v1/souls/proto.example.com')).status, 404, 'the tool did not run');
    // The same call without it runs.
    const ok = await callTool(admin, 'register-soul', { sid: 'proto.example.com', transport: 'agent', covens: [] });
    assert.equal(ok.isError, false, ok.text);
  });

  it('takes the page limits of the REST call: a limit that coercion would make infinite is refused over both doors', async () => {
    for (const sid of ['page-1.example.com', 'page-2.example.com']) {
      assert.equal(
        (await callTool(admin, 'register-soul', { sid, transport: 'agent', covens: ['paged'] })).isError,
        false,
      );
    }
    for (const limit of ['1e309', 'Infinity', '0x10', 1.5, 1001, 0]) {
      const mcp = await callTool(admin, 'list-souls', { coven: 'paged', limit });
      assert.equal(mcp.isError, true, `${limit}: ${mcp.text}`);
      assert.equal(mcp.data.status, 400);
      assert.deepEqual(
        mcp.data.errors.map((e: { path: string }) => e.path),
        ['/arguments/limit'],
        mcp.text,
      );
      const rest = await clientFor(tk)('GET', `/v1/souls?coven=paged&limit=${encodeURIComponent(String(limit))}`);
      assert.equal(rest.status, 400, `${limit} over REST`);
      assert.equal(rest.body.errors[0].message, mcp.data.errors[0].message, 'the same rule in the same words');
    }
    const first = await callTool(admin, 'list-souls', { coven: 'paged', limit: 1 });
    assert.equal(first.data.items.length, 1, first.text);
    assert.equal(typeof first.data.next_cursor, 'string');
    const asText = await callTool(admin, 'list-souls', { coven: 'paged', limit: '1' });
    assert.equal(asText.data.items.length, 1, 'a limit written out as digits is the same limit');
  });

  it('refuses a call without the permission, naming it, as the API does', async () => {
    const viewer = await connectMcp(addr, await operatorToken(tk, 'vera', 'viewer'));
    try {
      const read = await callTool(viewer, 'list-souls');
      assert.equal(read.isError, false, 'a viewer may read');
      const write = await callTool(viewer, 'register-soul', {
        sid: 'sneaky.example.com',
        transport: 'agent',
        covens: [],
      });
      assert.equal(write.isError, true);
      assert.equal(write.data.status, 403);
      assert.equal(write.data.missing_permission, 'souls:create');
      assert.match(write.text, /lacks the permission souls:create/);
      assert.equal((await clientFor(tk)('GET', '/v1/souls/sneaky.example.com')).status, 404, 'nothing was registered');
    } finally {
      await viewer.close();
    }
  });

  it('refuses a request without a token, or with an expired one, before any MCP message is read', async () => {
    await assert.rejects(connectMcp(addr, null), /401|Unauthorized|Bearer/i);
    const init = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const bare = await fetch(mcpUrl(addr), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(init),
    });
    assert.equal(bare.status, 401);
    assert.match((await bare.json()).detail, /Authorization: Bearer/);

    const { token: expired } = await issueOperatorToken(
      tk.keeper.runtime.signingKey,
      tk.config.auth.jwt.issuer,
      'admin',
      'cluster-admin',
      60_000,
      new Date(Date.now() - 3_600_000),
    );
    const old = await fetch(mcpUrl(addr), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${expired}` },
      body: JSON.stringify(init),
    });
    assert.equal(old.status, 401);
    assert.match((await old.json()).detail, /expired/);
  });
});
