// The per-operator request rate limit on a real keeper (config api.rate_limit): past the burst, 429
// with Retry-After and a problem body naming the operator and the limit; nothing is changed by the
// refused request; another operator is not slowed down. MCP tool calls spend the same budget: past
// it a JSON-RPC error with the wait, and the API refuses the operator too.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { MCP_RATE_LIMITED } from '../../mcp/invoke';
import { connectMcp } from '../mcp/client';
import { freePort } from '../support/ports';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { assertProblem, clientFor, operatorToken } from './helpers';

describe('Operator API: per-operator rate limit', function () {
  this.timeout(60_000);
  let tk: TestKeeper;

  before(async () => {
    tk = await startTestKeeper({
      mutate: (doc) => {
        doc.api = { rate_limit: { requests_per_second: 0.5, burst: 4 } };
      },
    });
  });
  after(async () => {
    await tk?.stop();
  });

  it('answers 429 with Retry-After past the burst, changes nothing, and leaves other operators alone', async () => {
    // Creating two operators spends the admin's four tokens; each new operator has a full bucket.
    const asB = clientFor(tk, await operatorToken(tk, 'ops-b', 'operator'));
    const asC = clientFor(tk, await operatorToken(tk, 'ops-c', 'viewer'));
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await asB('GET', '/v1/souls')).status);
    assert.deepEqual(statuses, [200, 200, 200, 200]);
    const refused = await asB('POST', '/v1/souls', {
      body: { sid: 'limited.example.com', transport: 'agent', covens: ['web'] },
    });
    assertProblem(refused, 429);
    assert.equal(refused.body.type, 'urn:keeper:problem:rate-limited');
    assert.match(
      refused.body.detail,
      /operator ops-b sent more than 0\.5 requests per second \(bursts up to 4\); retry after 2 s/,
    );
    assert.equal(refused.headers.get('retry-after'), '2');
    const check = await asC('GET', '/v1/souls/limited.example.com');
    assert.equal(check.status, 404, 'the refused registration did not happen, and another operator is not limited');
  });
});

describe('MCP: tool calls spend the per-operator rate limit of the API', function () {
  this.timeout(60_000);
  let tk: TestKeeper;
  let mcp: Client;

  before(async () => {
    const addr = `127.0.0.1:${await freePort()}`;
    tk = await startTestKeeper({
      mutate: (doc) => {
        doc.api = { rate_limit: { requests_per_second: 0.5, burst: 3 } };
        doc.listen.mcp = { addr };
      },
    });
    mcp = await connectMcp(addr, tk.adminToken);
  });
  after(async () => {
    await mcp?.close();
    await tk?.stop();
  });

  it('past the burst a tool call is a protocol error with the wait; the API then refuses the same operator', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await mcp.callTool({ name: 'list-souls', arguments: {} });
      assert.notEqual(r.isError, true, JSON.stringify(r));
    }
    await assert.rejects(mcp.callTool({ name: 'list-souls', arguments: {} }), (err: unknown) => {
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, MCP_RATE_LIMITED);
      assert.match(
        err.message,
        /operator [^ ]+ sent more than 0\.5 requests per second \(bursts up to 3\); retry after 2 s/,
      );
      assert.deepEqual(err.data, { status: 429, retry_after: 2 });
      return true;
    });
    const api = await clientFor(tk)('GET', '/v1/souls');
    assertProblem(api, 429);
    assert.ok(Number(api.headers.get('retry-after')) >= 1, 'one budget for both listeners');
  });
});
