// A test keeper with its MCP listener on a free port, and MCP clients signed in as its operators:
// what every MCP test against a real keeper starts from.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { operatorToken } from '../api/helpers';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { freePort } from '../support/ports';
import { connectMcp } from './client';

export interface McpKeeper {
  tk: TestKeeper;
  /** The admin's client. */
  admin: Client;
  /** A client for a new operator of `role` (its aid given), signed in with its own token. */
  as(aid: string, role: string): Promise<Client>;
  /** Closes every client this made, then the keeper. */
  stop(): Promise<void>;
}

export async function startMcpKeeper(): Promise<McpKeeper> {
  const addr = `127.0.0.1:${await freePort()}`;
  const tk = await startTestKeeper({
    mutate: (doc) => {
      doc.listen.mcp = { addr };
    },
  });
  const clients: Client[] = [];
  const connect = async (token: string) => {
    const c = await connectMcp(addr, token);
    clients.push(c);
    return c;
  };
  return {
    tk,
    admin: await connect(tk.adminToken),
    as: async (aid, role) => connect(await operatorToken(tk, aid, role)),
    stop: async () => {
      for (const c of clients) await c.close();
      await tk.stop();
    },
  };
}
