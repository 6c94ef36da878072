// The activity stream (issue 31, "An activity stream") on the real stack: a real keeper, its
// workflows, MCP listener and PostgreSQL. Every change through the API or MCP is one row naming the
// operator, its token's jti, the source address, the route or tool, the target, the outcome and
// the run it started; reads are not rows; no body or query reaches it; GET /v1/activity filters and
// pages it and needs activity:read. Runs and plans say who made them (created_by, started_by).
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { decodeJwt } from 'jose';
import { beginRun } from '../../db/repos/incarnations';
import { recordDrift } from '../../db/repos/drift';
import { newApplyId } from '../../runs/apply-id';
import { freePort } from '../support/ports';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { serviceRepo } from '../support/service-repo';
import { waitFor } from '../agents/harness';
import { callTool, connectMcp } from '../mcp/client';
import { assertProblem, clientFor, operatorToken } from './helpers';

describe('Operator API: the activity stream', function () {
  this.timeout(180_000);
  let k: TestKeeper;
  let mcpAddr: string;
  let mcp: Client | undefined;
  const api = (...args: Parameters<ReturnType<typeof clientFor>>) => clientFor(k)(...args);
  const jtiOf = (token: string) => decodeJwt(token).jti as string;
  /** Every row, newest first, walked page by page. */
  async function all(query = '', token = k.adminToken): Promise<any[]> {
    const rows: any[] = [];
    let cursor: string | null = null;
    do {
      const r = await clientFor(k, token)('GET', `/v1/activity?limit=2${query}${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(r.status, 200, r.text);
      rows.push(...r.body.items);
      cursor = r.body.next_cursor;
    } while (cursor !== null);
    return rows;
  }

  before(async () => {
    mcpAddr = `127.0.0.1:${await freePort()}`;
    k = await startTestKeeper({
      mutate: (doc) => {
        doc.listen.mcp = { addr: mcpAddr };
      },
    });
  });
  after(async () => {
    await mcp?.close();
    await k?.stop();
  });

  it('records each change through the API with actor, jti, source, route, target and status, whatever the outcome; reads are not recorded', async () => {
    const ann = await operatorToken(k, 'ann', 'operator');
    assert.equal((await api('GET', '/v1/archons')).status, 200);
    assertProblem(await clientFor(k, ann)('DELETE', '/v1/archons/admin'), 403, /lacks the permission archons:delete/);

    const rows = await all();
    assert.deepEqual(
      rows.map((r) => [r.actor, r.action, r.target, r.status]),
      [
        ['ann', 'DELETE /v1/archons/{aid}', '/v1/archons/admin', 403],
        ['admin', 'POST /v1/archons/{aid}/tokens', '/v1/archons/ann/tokens', 201],
        ['admin', 'POST /v1/archons', '/v1/archons', 201],
      ],
    );
    assert.equal(rows[0].jti, jtiOf(ann));
    assert.equal(rows[1].jti, jtiOf(k.adminToken));
    for (const r of rows) {
      assert.match(r.source, /127\.0\.0\.1/);
      assert.equal(r.via, 'api');
      assert.equal(r.actor_kind, 'operator');
      assert.ok(Date.parse(r.at) > 0);
    }
    // Strictly newest first: ids fall.
    assert.ok(rows.every((r, i) => i === 0 || BigInt(rows[i - 1].id) > BigInt(r.id)));
  });

  it('keeps no body or query of a call: a secret sent with a refused call is nowhere in the stream', async () => {
    const marker = 'hunter2-activity-marker';
    assertProblem(
      await api('POST', `/v1/archons?password=${marker}`, { body: { aid: 'bob', role: 'operator', password: marker } }),
      400,
    );
    const { rows } = await k.keeper.runtime.db.raw('select row_to_json(a)::text as t from activity a');
    assert.ok(rows.length > 0);
    for (const r of rows) assert.doesNotMatch(r.t, new RegExp(marker));
    const [last] = await all();
    assert.deepEqual([last.action, last.target, last.status], ['POST /v1/archons', '/v1/archons', 400]);
  });

  it('filters by actor, target (and what lies under it), outcome, since/until; bad filters are 400 naming the field', async () => {
    const annRows = await all('&actor=ann');
    assert.ok(annRows.length > 0 && annRows.every((r) => r.actor === 'ann'));
    const under = await all('&target=/v1/archons/ann');
    assert.deepEqual(
      under.map((r) => r.target),
      ['/v1/archons/ann/tokens'],
    );
    const everything = await all();
    const newest = everything[0];
    const since = await all(`&since=${encodeURIComponent(newest.at)}`);
    assert.ok(since.some((r) => r.id === newest.id) && since.every((r) => Date.parse(r.at) >= Date.parse(newest.at)));
    const oldest = everything[everything.length - 1];
    assert.deepEqual(await all(`&until=${encodeURIComponent(oldest.at)}`), []);
    assertProblem(await api('GET', '/v1/activity?since=yesterday'), 400);
    const bad = await api('GET', '/v1/activity?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z');
    assertProblem(bad, 400, /since lies after until/);
    assert.equal(bad.body.errors[0].path, '/query/since');
    assertProblem(await api('GET', '/v1/activity?target=archons'), 400);
    assertProblem(await api('GET', '/v1/activity?cursor=abc'), 400, /cursor/);
    // outcome: ok below 400, refused 4xx, failed 5xx; together they are the whole stream.
    const ok = await all('&outcome=ok');
    const refused = await all('&outcome=refused');
    const failed = await all('&outcome=failed');
    assert.ok(ok.length > 0 && ok.every((r) => r.status < 400));
    assert.ok(refused.length > 0 && refused.every((r) => r.status >= 400 && r.status < 500));
    assert.ok(failed.every((r) => r.status >= 500));
    assert.equal(ok.length + refused.length + failed.length, everything.length);
    const badOutcome = await api('GET', '/v1/activity?outcome=denied');
    assertProblem(badOutcome, 400);
    assert.equal(badOutcome.body.errors[0].path, '/query/outcome');
  });

  it('a viewer lacks activity:read (403); an operator reads it', async () => {
    const vic = await operatorToken(k, 'vic', 'viewer');
    assertProblem(await clientFor(k, vic)('GET', '/v1/activity'), 403, /lacks the permission activity:read/);
    const ops = await operatorToken(k, 'ops', 'operator');
    assert.ok((await all('', ops)).length > 0);
  });

  it('records a change made through MCP with the tool, and a refused one with its status', async () => {
    const otto = await operatorToken(k, 'otto', 'operator');
    mcp = await connectMcp(mcpAddr, otto);
    const reg = await callTool(mcp, 'register-soul', { sid: 'act-1.example.com', transport: 'agent', covens: ['web'] });
    assert.equal(reg.isError, false, reg.text);
    const again = await callTool(mcp, 'register-soul', {
      sid: 'act-1.example.com',
      transport: 'agent',
      covens: ['web'],
    });
    assert.equal(again.isError, true);
    await callTool(mcp, 'list-souls', {});
    const rows = await all('&actor=otto');
    assert.deepEqual(
      rows.map((r) => [r.via, r.action, r.target, r.status]),
      [
        ['mcp', 'mcp register-soul', '/v1/souls', 409],
        ['mcp', 'mcp register-soul', '/v1/souls', 201],
      ],
    );
    assert.equal(rows[0].jti, jtiOf(otto));
  });

  it('a run and a plan name who made them (created_by, started_by), and the call that started them carries their apply_id', async () => {
    const repo = serviceRepo({ tags: ['v1'] });
    assert.equal((await api('POST', '/v1/services', { body: { name: 'motd', git: repo.url, ref: 'v1' } })).status, 201);
    const created = await api('POST', '/v1/incarnations', {
      body: {
        name: 'act-a',
        service: 'motd',
        covens: ['nobody-here'],
        input: { root: path.join(os.tmpdir(), 'act-a') },
        allow_empty: true,
      },
    });
    assert.equal(created.status, 202, created.text);
    const applyId = created.body.apply_id as string;
    const ready = await waitFor(
      'act-a to be ready',
      async () => {
        const r = await api('GET', '/v1/incarnations/act-a');
        return r.body?.status === 'ready' ? r.body : undefined;
      },
      60_000,
      200,
    );
    assert.deepEqual([ready.last_run.created_by, ready.last_run.started_by], ['admin', 'operator']);
    const run = await api('GET', `/v1/incarnations/act-a/runs/${applyId}`);
    assert.deepEqual([run.body.created_by, run.body.started_by], ['admin', 'operator']);
    const listed = await api('GET', '/v1/incarnations/act-a/runs');
    assert.deepEqual([listed.body.items[0].created_by, listed.body.items[0].started_by], ['admin', 'operator']);

    const plan = await api('POST', '/v1/incarnations/act-a/plans', {
      body: { operation: 'create', allow_empty: true },
    });
    assert.equal(plan.status, 202, plan.text);
    const shown = await api('GET', `/v1/incarnations/act-a/plans/${plan.body.plan_id}`);
    assert.deepEqual([shown.body.created_by, shown.body.started_by], ['admin', 'operator']);

    const rows = await all('&target=/v1/incarnations/act-a');
    assert.deepEqual(
      rows.map((r) => [r.action, r.apply_id]),
      [['POST /v1/incarnations/{name}/plans', plan.body.plan_id]],
    );
    const [create] = (await all('&actor=admin')).filter((r) => r.action === 'POST /v1/incarnations');
    assert.deepEqual([create.target, create.status, create.apply_id], ['/v1/incarnations', 202, applyId]);
  });

  it('runs the keeper starts on its own (converger, drift repair) and drift findings are rows of their own; a check in sync is not', async () => {
    const db = k.keeper.runtime.db;
    const inc = await api('GET', '/v1/incarnations/act-a');
    const run = (createdBy: string) => ({
      applyId: newApplyId('act-a', 'create'),
      incarnation: 'act-a',
      operation: 'create',
      input: {},
      serviceRef: 'v1',
      createdBy,
    });
    const conv = run('keeper:k-test');
    await beginRun(db, 'act-a', conv);
    await db('incarnation_runs').where({ apply_id: conv.applyId }).update({ status: 'failed', phase: 'done' });
    await db('incarnations').where({ name: 'act-a' }).update({ status: 'ready', current_apply_id: null });
    const repair = run('keeper:drift-check');
    await beginRun(db, 'act-a', repair);
    await db('incarnations').where({ name: 'act-a' }).update({ drift_interval: '1h' });
    await recordDrift(db, 'act-a', { status: 'in_sync', planId: inc.body.last_run.apply_id, drifted: [] });
    await recordDrift(db, 'act-a', { status: 'drifted', planId: inc.body.last_run.apply_id, drifted: ['h1'] });

    const rows = (await all('&target=/v1/incarnations/act-a')).filter((r) => r.via !== 'api');
    assert.deepEqual(
      rows.map((r) => [r.actor, r.actor_kind, r.action, r.apply_id, r.jti]),
      [
        ['keeper:drift-check', 'drift', 'drift-check drifted', inc.body.last_run.apply_id, null],
        ['keeper:drift-check', 'drift', 'run create', repair.applyId, null],
        ['keeper:k-test', 'converger', 'run create', conv.applyId, null],
      ],
    );
    const shown = await api('GET', `/v1/incarnations/act-a/runs/${conv.applyId}`);
    assert.deepEqual([shown.body.created_by, shown.body.started_by], ['keeper:k-test', 'converger']);
  });
  it('records the path a call reached, not the URL as sent: `/V1/...` and percent-encoded names are found by the target filter (issue 45)', async () => {
    const uma = await operatorToken(k, 'uma', 'viewer');
    // The router matches case-insensitively and decodes `%61dmin` to `admin`: the same route, the same archon.
    const sent = await clientFor(k, uma)('DELETE', '/V1/Archons/%61dmin');
    assertProblem(sent, 403, /lacks the permission archons:delete/);
    const found = await all('&target=/v1/archons/admin&actor=uma');
    assert.deepEqual(
      found.map((r) => [r.action, r.target, r.status]),
      [['DELETE /v1/archons/{aid}', '/v1/archons/admin', 403]],
    );
    // A name that needs its encoding is recorded decoded as the route saw it.
    const odd = await clientFor(k, uma)('POST', '/v1/archons/%75ma%20x/tokens');
    assert.equal(odd.status, 403, odd.text);
    const under = await all('&target=/v1/archons/uma x&actor=uma');
    assert.deepEqual(
      under.map((r) => r.target),
      ['/v1/archons/uma x/tokens'],
    );
  });
});
