// Held answers check their caller again (issue 45, api/stream-auth.ts), on a real keeper and the
// real PostgreSQL: an event stream opened before its operator's tokens were revoked (or the operator
// removed) ends within a few seconds with `event: error` naming why; a `?wait=` held over a
// revocation of its token answers the 401 a new request would get; through MCP the same wait ends
// with a protocol error. The run they follow is a row kept `running` (nothing here needs a workflow).
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { decodeJwt } from 'jose';
import { takeSseEvents, type SseEvent } from '../../common/sse';
import { MCP_CALLER_REFUSED } from '../../mcp/invoke';
import { connectMcp } from '../mcp/client';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { freePort } from '../support/ports';
import { clientFor, operatorToken } from './helpers';

const RUN = 'held.create.1';
const EVENTS = `/v1/incarnations/held/runs/${RUN}/events`;

/** Opens the stream and reads it to its end; `opened` resolves at the first event. */
function follow(tk: TestKeeper, token: string) {
  let opened!: () => void;
  const first = new Promise<void>((r) => {
    opened = r;
  });
  const done = (async () => {
    const res = await fetch(`${tk.baseUrl}${EVENTS}`, { headers: { Authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`the stream answered ${res.status}: ${await res.text()}`);
    const events: SseEvent[] = [];
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) break;
      const taken = takeSseEvents(buf + dec.decode(value, { stream: true }));
      buf = taken.rest;
      events.push(...taken.events);
      if (events.length > 0) opened();
    }
    return { events, endedAt: Date.now() };
  })();
  return { first, done };
}

describe('held streams and waits end when their caller is refused', function () {
  this.timeout(90_000);
  let tk: TestKeeper;
  let mcpAddr: string;
  const admin = () => clientFor(tk);

  before(async () => {
    mcpAddr = `127.0.0.1:${await freePort()}`;
    tk = await startTestKeeper({
      mutate: (doc) => {
        doc.listen.mcp = { addr: mcpAddr };
      },
    });
    const db = tk.keeper.runtime.db;
    await db('services').insert({ name: 'held-svc', git: 'file:///nowhere', ref: 'v1' });
    await db('incarnations').insert({ name: 'held', service: 'held-svc', covens: ['web'], status: 'applying' });
    await db('incarnation_runs').insert({
      apply_id: RUN,
      incarnation: 'held',
      operation: 'create',
      status: 'running',
      phase: 'dispatching',
    });
  });
  after(async () => {
    await tk?.stop();
  });

  it("ends an open event stream with `event: error` once the operator's tokens are revoked; a fresh token streams again", async () => {
    const token = await operatorToken(tk, 'sse-watcher', 'viewer');
    const s = follow(tk, token);
    await s.first;
    const revokedAt = Date.now();
    assert.equal((await admin()('POST', '/v1/archons/sse-watcher/revoke-tokens')).status, 200);
    const { events, endedAt } = await s.done;
    assert.ok(endedAt - revokedAt < 8_000, `closed ${endedAt - revokedAt} ms after the revocation`);
    const last = events[events.length - 1] as { event: string; data: any };
    assert.equal(last.event, 'error', JSON.stringify(events));
    assert.equal(last.data.status, 401);
    assert.equal(last.data.type, 'urn:keeper:problem:unauthorized');
    assert.match(last.data.detail, /the tokens of operator sse-watcher issued before .* were revoked/);

    // Not every stream: the operator's new token is served, and keeps being served.
    const fresh = await admin()('POST', '/v1/archons/sse-watcher/tokens');
    const again = follow(tk, fresh.body.token);
    await again.first;
    let ended = false;
    void again.done.then(() => {
      ended = true;
    });
    await new Promise((r) => setTimeout(r, 5_000));
    assert.equal(ended, false, 'two checks passed: the new token is still served');
    assert.ok((await admin()('DELETE', '/v1/archons/sse-watcher')).status < 300);
    const gone = await again.done;
    const end = gone.events[gone.events.length - 1] as { event: string; data: any };
    assert.equal(end.event, 'error');
    assert.match(end.data.detail, /operator sse-watcher no longer exists/);
  });

  it('ends a held ?wait with the 401 of a new request once its token is revoked by its jti', async () => {
    const token = await operatorToken(tk, 'wait-watcher', 'viewer');
    const jti = decodeJwt(token).jti as string;
    const started = Date.now();
    const held = clientFor(tk, token)('GET', `/v1/incarnations/held/runs/${RUN}?wait=30s`);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await admin()('POST', '/v1/archons/wait-watcher/revoke-tokens', { body: { jti } })).status, 200);
    const r = await held;
    assert.equal(r.status, 401, r.text);
    assert.match(r.body.detail, new RegExp(`token ${jti} of operator wait-watcher was revoked`));
    assert.ok(Date.now() - started < 10_000, 'answered within seconds, not after the 30 s wait');
  });

  it('ends an MCP get-run wait with a protocol error once the tokens are revoked', async () => {
    const token = await operatorToken(tk, 'mcp-watcher', 'viewer');
    const client: Client = await connectMcp(mcpAddr, token);
    try {
      const started = Date.now();
      const held = client.callTool(
        { name: 'get-run', arguments: { name: 'held', apply_id: RUN, wait: '30s' } },
        undefined,
        { timeout: 60_000 },
      );
      await new Promise((r) => setTimeout(r, 500));
      assert.equal((await admin()('POST', '/v1/archons/mcp-watcher/revoke-tokens')).status, 200);
      await assert.rejects(held, (err: unknown) => {
        assert.ok(err instanceof McpError, String(err));
        assert.equal(err.code, MCP_CALLER_REFUSED);
        assert.match(err.message, /the tokens of operator mcp-watcher issued before .* were revoked/);
        assert.deepEqual(err.data, { status: 401, type: 'urn:keeper:problem:unauthorized' });
        return true;
      });
      assert.ok(Date.now() - started < 10_000, 'answered within seconds, not after the 30 s wait');
    } finally {
      await client.close();
    }
  });
});
