// MCP is off unless listen.mcp is configured (interface spec 4.3): no block, no listener.
import assert from 'node:assert/strict';
import type { ApiDeps } from '../api/deps';
import { mcpComponents } from '.';

function depsWith(listen: Record<string, unknown>): ApiDeps {
  return { runtime: { config: { listen } }, metrics: {} } as unknown as ApiDeps;
}

describe('mcp component', () => {
  it('is absent when listen.mcp is absent', () => {
    assert.deepEqual(mcpComponents(depsWith({ openapi: { addr: '127.0.0.1:8080' } })), []);
  });
});
