// Input that must never slip through (review findings of 32d27f0), on a real keeper: numeric query
// parameters are decimal integers or a 400 naming the field (an infinite `limit` used to drop the
// database LIMIT); oversized headers get a problem body, not Node's bare 431; MCP arguments named
// like Object.prototype members are unknown arguments (400), not a 500.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { freePort } from '../support/ports';
import { callTool, connectMcp } from '../mcp/client';
import { assertProblem, clientFor } from './helpers';

describe('input limits: query numbers, oversized headers, MCP argument names', function () {
  this.timeout(60_000);
  let tk: TestKeeper;
  let mcp: Client;

  before(async () => {
    const addr = `127.0.0.1:${await freePort()}`;
    tk = await startTestKeeper({
      mutate: (doc) => {
        doc.listen.mcp = { addr };
      },
    });
    mcp = await connectMcp(addr, tk.adminToken);
    const api = clientFor(tk);
    for (const n of [1, 2, 3])
      assert.equal(
        (await api('POST', '/v1/souls', { body: { sid: `lim-${n}.example.com`, transport: 'agent', covens: ['web'] } }))
          .status,
        201,
      );
  });
  after(async () => {
    await mcp?.close();
    await tk?.stop();
  });

  it('refuses limit=1e309, Infinity, 0x10, 1.0, " 5" and a repeated limit with 400 naming /query/limit', async () => {
    const api = clientFor(tk);
    for (const q of ['1e309', 'Infinity', '0x10', '1.0', '%205', '1&limit=2']) {
      const a = await api('GET', `/v1/souls?limit=${q}`);
      assertProblem(a, 400);
      assert.equal(a.body.errors[0].path, '/query/limit', q);
    }
    const ok = await api('GET', '/v1/souls?limit=2');
    assert.equal(ok.status, 200);
    assert.equal(ok.body.items.length, 2, 'a valid limit still limits');
  });

  it('answers headers over 16 KiB with a 431 problem body', async () => {
    const res = await fetch(`${tk.baseUrl}/v1/souls`, { headers: { Authorization: `Bearer ${'a'.repeat(70_000)}` } });
    assert.equal(res.status, 431);
    assert.equal(res.headers.get('content-type'), 'application/problem+json');
    const body = (await res.json()) as { status: number; type: string; detail: string };
    assert.equal(body.status, 431);
    assert.equal(body.type, 'urn:keeper:problem:headers-too-large');
    assert.match(body.detail, /exceed 16 KiB/);
  });

  it('treats MCP arguments named constructor, toString or hasOwnProperty as unknown (400), never a 500', async () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      const r = await callTool(mcp, 'get-soul', { sid: 'lim-1.example.com', [name]: 'x' });
      assert.equal(r.isError, true, name);
      assert.match(r.text, /^400 Bad Request: an argument is not known/, `${name}: ${r.text}`);
    }
  });
});
