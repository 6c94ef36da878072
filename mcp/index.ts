// The optional MCP listener (interface spec 4.3 `listen.mcp`): a keeper component when the block is
// present, nothing at all when it is absent.
import { allRoutes } from '../api';
import type { ApiDeps } from '../api/deps';
import type { Component } from '../platform/component';
import { httpComponent } from '../platform/listen';
import { createMcpApp } from './server';

export { createMcpApp, MCP_PATH } from './server';
export { buildTools, TOOL_TABLE } from './tools';

export function mcpComponents(deps: ApiDeps): Component[] {
  const addr = deps.runtime.config.listen.mcp?.addr;
  if (addr === undefined) return [];
  return [httpComponent('MCP', addr, createMcpApp(deps, allRoutes))];
}
