// MCP is off unless listen.mcp is configured (interface spec 4.3): no block, no listener.
import assert from 'node:assert/strict';
import type { ApiDeps } from '../api/deps';
import { mcpComponents } from '.';
import { protoArgument } from './server';

function depsWith(listen: Record<string, unknown>): ApiDeps {
  return { runtime: { config: { listen } }, metrics: {} } as unknown as ApiDeps;
}

describe('mcp component', () => {
  it('is absent when listen.mcp is absent', () => {
    assert.deepEqual(mcpComponents(depsWith({ openapi: { addr: '127.0.0.1:8080' } })), []);
  });
});

describe('mcp: an argument named __proto__ (issue 45)', () => {
  const call = (id: number, args: string) =>
    JSON.parse(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"t","arguments":${args}}}`);

  it('is refused as invalid params naming it, a batch whole; other requests pass', () => {
    const one = protoArgument(call(3, '{"a":1,"__proto__":{"x":1}}')) as any;
    assert.equal(one.id, 3);
    assert.equal(one.error.code, -32602);
    assert.match(one.error.message, /\/arguments\/__proto__ is not a known argument/);
    const batch = protoArgument([call(1, '{"a":1}'), call(2, '{"__proto__":null}')]) as any[];
    assert.deepEqual(
      batch.map((m) => [m.id, m.error.code]),
      [
        [1, -32602],
        [2, -32602],
      ],
    );
    assert.equal(protoArgument(call(4, '{"a":1,"constructor":2}')), null, 'other names are refused by the tool itself');
    assert.equal(protoArgument({ jsonrpc: '2.0', id: 5, method: 'tools/list' }), null);
    assert.equal(protoArgument(undefined), null);
  });
});
