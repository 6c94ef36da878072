// One-off executions' limits read from the keeper's config (executions.confirm_above, per_operator,
// modules) against a real keeper, real souls and the stack's Temporal, and an execution whose
// workflow is gone no longer holding its operator's slot: the next request closes it, its silent
// host `unknown`, and starts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { connectStackTemporal } from '../support/temporal-client';
import { assertProblem, clientFor, operatorToken } from '../api/helpers';
import { startSouls, tempDir, waitFor, type TestSoul } from './keeper';

describe('execution limits from the keeper config, and executions whose workflow is gone', function () {
  this.timeout(180_000);
  let k: TestKeeper;
  let api: ReturnType<typeof clientFor>;
  let root: string;
  let souls: TestSoul[];
  let temporal: Client;
  let close: () => Promise<void>;

  before(async () => {
    root = tempDir('execution-limits-');
    k = await startTestKeeper({
      mutate: (doc) => {
        doc['executions'] = { confirm_above: 1, per_operator: 2, modules: { responder: ['core.cmd.run'] } };
      },
    });
    api = clientFor(k);
    souls = await startSouls(k, path.join(root, 'souls'), [['web'], ['web']]);
    const connection = await connectStackTemporal();
    temporal = new Client({ connection, namespace: 'default' });
    close = () => connection.close();
  });
  after(async () => {
    await Promise.all((souls ?? []).map((s) => s.run.kill()));
    await close?.();
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const finished = (id: string) =>
    waitFor(
      `execution ${id}`,
      async () => {
        const r = await api('GET', `/v1/executions/${id}`);
        assert.equal(r.status, 200, r.text);
        return r.body.status === 'done' ? r.body : undefined;
      },
      90_000,
      200,
    );

  it("the configured allow-list replaces the role's built-in one; the configured threshold asks for confirm", async () => {
    const responder = clientFor(k, await operatorToken(k, 'limits-responder', 'responder'));
    const one = { module: 'core.cmd.run', params: { argv: ['echo', 'hi'] }, target: { sids: [souls[0]!.sid] } };
    const r = await responder('POST', '/v1/executions', { body: one });
    assert.equal(r.status, 202, r.text);
    assert.deepEqual((await finished(r.body.id)).summary, { ok: 0, changed: 1, failed: 0, unknown: 0 });
    assertProblem(
      await responder('POST', '/v1/executions', {
        body: { module: 'core.service.restarted', params: { name: 'nginx' }, target: { sids: [souls[0]!.sid] } },
      }),
      403,
      /may not run module core\.service\.restarted \(allowed: core\.cmd\.run\)/,
    );
    const both = { ...one, target: { covens: ['web'] } };
    assertProblem(await responder('POST', '/v1/executions', { body: both }), 428, /selects 2 hosts, more than 1/);
    const confirmed = await responder('POST', '/v1/executions', { body: { ...both, confirm: true } });
    assert.equal(confirmed.status, 202, confirmed.text);
    assert.equal((await finished(confirmed.body.id)).summary.changed, 2);
  });

  it('refuses a third running execution (per_operator 2) until the workflows of the first two are gone; those end unknown', async () => {
    // The first two stay running: their host is busy with a slow command (a live soul, so the
    // registry keeps it connected; a stopped one would be `unknown` at once and free the slot).
    const busyHost = souls[1]!.sid;
    const slow = {
      module: 'core.cmd.run',
      params: { argv: ['sleep 90'], shell: true },
      target: { sids: [busyHost] },
      timeout: 600,
    };
    const held: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await api('POST', '/v1/executions', { body: slow });
      assert.equal(r.status, 202, r.text);
      held.push(r.body.id);
    }
    const next = { module: 'core.cmd.run', params: { argv: ['true'] }, target: { sids: [souls[0]!.sid] } };
    const busy = await api('POST', '/v1/executions', { body: next });
    assertProblem(busy, 429, /you have 2 executions running/);
    assert.equal(busy.headers.get('retry-after'), '5');
    // Running workflows are not closed by that look: still refused.
    assertProblem(await api('POST', '/v1/executions', { body: next }), 429);
    for (const id of held) assert.equal((await api('GET', `/v1/executions/${id}`)).body.status, 'running');

    for (const id of held) await temporal.workflow.getHandle(`execution-${id}`).terminate('test: the workflow is gone');
    const started = await api('POST', '/v1/executions', { body: next });
    assert.equal(started.status, 202, started.text);
    assert.deepEqual((await finished(started.body.id)).summary, { ok: 0, changed: 1, failed: 0, unknown: 0 });
    for (const id of held) {
      const e = (await api('GET', `/v1/executions/${id}`)).body;
      assert.equal(e.status, 'done');
      assert.deepEqual(e.summary, { ok: 0, changed: 0, failed: 0, unknown: 1 });
      assert.match(e.hosts[0].output, /workflow ended in Temporal \(terminated\).*not known/);
    }
  });
});
