// The incarnation tools over MCP against a real keeper with its Temporal workers and one real soul:
// create-incarnation, get-incarnation, get-incarnation-history, list-incarnations, run-operation,
// list-runs, get-run, and unlock (plain and with retry), each checked by what the REST API then shows. The
// service is the real engine's fixture test/fixtures/services/note.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { freePort } from '../support/ports';
import { api, gitRepoFrom, settled, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import { repoRoot } from '../support/repo';
import { operatorToken } from '../api/helpers';
import { callTool, connectMcp } from './client';

/** test/runs' keeper with the MCP listener turned on. */
function startMcpRunKeeper(mcpAddr: string): Promise<TestKeeper> {
  return startTestKeeper({
    mutate: (doc) => {
      doc.listen.mcp = { addr: mcpAddr };
    },
  });
}

describe('MCP listener: incarnation tools', function () {
  this.timeout(240_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[] = [];
  let admin: Client;
  let addr: string;

  before(async () => {
    root = tempDir('mcp-runs-');
    addr = `127.0.0.1:${await freePort()}`;
    k = await startMcpRunKeeper(addr);
    souls = await startSouls(k, path.join(root, 'souls'), [['web']]);
    admin = await connectMcp(addr, k.adminToken);
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'note'),
      path.join(root, 'note.git'),
      'v1',
    );
    const reg = await callTool(admin, 'register-service', { name: 'motd', git: url, ref: 'v1' });
    assert.equal(reg.isError, false, reg.text);
  });
  after(async () => {
    await admin?.close();
    await Promise.all(souls.map((s) => s.run.kill()));
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('create-incarnation is accepted with an apply_id; get-incarnation, get-run and the history follow it to ready', async () => {
    const created = await callTool(admin, 'create-incarnation', {
      name: 'motd-mcp',
      service: 'motd',
      covens: ['web'],
      input: { root, greeting: 'hello' },
    });
    assert.equal(created.isError, false, created.text);
    assert.match(created.data.apply_id, /^motd-mcp\.create\./);
    // get-run with `wait` answers when the run has ended: no polling loop.
    const waited = await callTool(admin, 'get-run', { name: 'motd-mcp', apply_id: created.data.apply_id, wait: '30s' });
    assert.equal(waited.isError, false, waited.text);
    assert.equal(waited.data.status, 'succeeded');
    assert.equal((await settled(k, 'motd-mcp')).status, 'ready');

    const got = await callTool(admin, 'get-incarnation', { name: 'motd-mcp' });
    assert.equal(got.data.status, 'ready');
    assert.deepEqual(got.data.state, { greeting: 'hello', motd: { lines: 1, by: 'note' } });
    const run = await callTool(admin, 'get-run', { name: 'motd-mcp', apply_id: created.data.apply_id });
    assert.equal(run.data.status, 'succeeded');
    assert.deepEqual(
      run.data.hosts.map((h: { sid: string }) => h.sid),
      [souls[0]!.sid],
    );
    assert.deepEqual(
      run.data.hosts[0].steps.map((st: { status: string }) => st.status),
      ['ok', 'changed'],
    );
    const history = await callTool(admin, 'get-incarnation-history', { name: 'motd-mcp' });
    assert.deepEqual(
      history.data.items.map((h: { apply_id: string }) => h.apply_id),
      [created.data.apply_id],
    );
    const runs = await callTool(admin, 'list-runs', { name: 'motd-mcp' });
    assert.equal(runs.isError, false, runs.text);
    assert.deepEqual(
      runs.data.items.map((i: { apply_id: string; status: string }) => [i.apply_id, i.status]),
      [[created.data.apply_id, 'succeeded']],
    );
    const list = await callTool(admin, 'list-incarnations', { status: 'ready' });
    assert.deepEqual(
      list.data.items.map((i: { name: string }) => i.name),
      ['motd-mcp'],
    );
    assert.equal(fs.readFileSync(path.join(root, souls[0]!.sid, 'motd'), 'utf8'), 'hello\n');
  });

  it('run-operation locks on a failing step; unlock with retry runs it again, plain unlock returns to ready', async () => {
    const bad = await callTool(admin, 'run-operation', {
      name: 'motd-mcp',
      operation: 'create',
      input: { root, greeting: 'bye', dir: '/proc/keeper-nope' },
    });
    assert.equal(bad.isError, false, bad.text);
    assert.equal((await settled(k, 'motd-mcp')).status, 'error_locked');

    const refused = await callTool(admin, 'run-operation', {
      name: 'motd-mcp',
      operation: 'create',
      input: { root, greeting: 'x' },
    });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /^409 Conflict: .*error_locked.*unlock/);

    const retry = await callTool(admin, 'unlock', { name: 'motd-mcp', retry: true });
    assert.equal(retry.isError, false, retry.text);
    assert.notEqual(retry.data.apply_id, bad.data.apply_id);
    assert.equal((await settled(k, 'motd-mcp')).status, 'error_locked', 'the same failing input fails again');

    const unlocked = await callTool(admin, 'unlock', { name: 'motd-mcp' });
    assert.equal(unlocked.isError, false, unlocked.text);
    assert.equal(unlocked.data.status, 'ready');
    const rest = await api(k, 'GET', '/v1/incarnations/motd-mcp');
    assert.equal(rest.body.status, 'ready');
    assert.deepEqual(
      rest.body.state,
      { greeting: 'hello', motd: { lines: 1, by: 'note' } },
      'nothing of the failed runs was committed',
    );
  });

  it('refuses incarnation writes to a viewer, naming the permission', async () => {
    const viewer = await connectMcp(addr, await operatorToken(k, 'vic', 'viewer'));
    try {
      assert.equal((await callTool(viewer, 'get-incarnation', { name: 'motd-mcp' })).isError, false);
      const run = await callTool(viewer, 'run-operation', {
        name: 'motd-mcp',
        operation: 'create',
        input: { root, greeting: 'no' },
      });
      assert.equal(run.isError, true);
      assert.equal(run.data.missing_permission, 'incarnations:run');
      const unlock = await callTool(viewer, 'unlock', { name: 'motd-mcp' });
      assert.equal(unlock.data.missing_permission, 'incarnations:unlock');
    } finally {
      await viewer.close();
    }
  });
});
