// An MCP client for the tests: the SDK's own Client over streamable HTTP, with the operator token in
// the Authorization header of every request (never in the URL).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export function mcpUrl(addr: string): URL {
  return new URL(`http://${addr}/mcp`);
}

export async function connectMcp(addr: string, token: string | null): Promise<Client> {
  const headers: Record<string, string> = token === null ? {} : { Authorization: `Bearer ${token}` };
  const client = new Client({ name: 'keeper-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(addr), { requestInit: { headers } }));
  return client;
}

/** Calls a tool and returns its result with the JSON answer (or the problem) parsed. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ isError: boolean; text: string; data: any }> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  return { isError: r.isError === true, text, data: r.structuredContent };
}
