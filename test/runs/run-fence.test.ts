// The apply_id fence and the run watch (issue 28, item 7), against the real stack's Temporal with
// TLS as the stack has it (off by default there, so this is the fence alone): while a run is live,
// a workflow started by someone else with its apply_id (another workflow id with the apply_id in its
// input, another workflow type, a shard id, the same workflow id again) acts for nothing; a run whose
// workflow is terminated in Temporal is locked with the reason within seconds, never left `applying`.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import knex, { type Knex } from 'knex';
import { connectStackTemporal } from '../support/temporal-client';
import { midDispatch, settledStatus, startRig, type Rig } from '../faults/rig';
import { api } from './keeper';

describe('runs: the apply_id fence and the watch for workflows ended outside the keeper', function () {
  this.timeout(300_000);
  let rig: Rig;
  let db: Knex;
  let connection: Connection;
  let client: Client;

  // One soul, 10 steps of about 2 s each: a run stays live long enough for the attempts below.
  before(async () => {
    rig = await startRig({ covens: [['web']], steps: 10, delaySec: 2 });
    db = knex({ client: 'pg', connection: rig.k.db.dsn, pool: { min: 0, max: 2 } });
    connection = await connectStackTemporal();
    client = new Client({ connection, namespace: rig.k.config.temporal.namespace });
  });
  after(async () => {
    await connection?.close();
    await db?.destroy();
    await rig?.stop();
  });

  const owner = async (applyId: string) =>
    (await db('incarnation_runs').where({ apply_id: applyId }).first('workflow_run_id')).workflow_run_id as
      | string
      | null;
  const runRow = (applyId: string) =>
    db('incarnation_runs').where({ apply_id: applyId }).first('status', 'error', 'workflow_run_id');

  /** Starts a workflow as an outsider would and answers why it failed (it must fail). */
  async function foreign(
    type: string,
    workflowId: string,
    args: unknown[],
    extra: Record<string, unknown> = {},
  ): Promise<{ type?: string; message: string }> {
    const handle = await client.workflow.start(type, {
      workflowId,
      taskQueue: rig.k.config.temporal.task_queue,
      args,
      ...extra,
    });
    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof WorkflowFailedError, `the foreign ${type} ${workflowId} must fail, got ${String(err)}`);
    // A regular activity's refusal arrives wrapped in an ActivityFailure, a local one's as it is.
    let cause = err.cause as (Error & { type?: string }) | undefined;
    while (cause && !cause.type && cause.cause) cause = cause.cause as Error & { type?: string };
    return { type: cause?.type, message: cause?.message ?? String(err.cause) };
  }

  it('refuses another workflow id, another workflow type and a shard id naming a live run; the run ends ready, its owner unchanged', async () => {
    const name = 'fence-live';
    const applyId = await rig.create(name);
    await midDispatch(rig, applyId);
    const own = await owner(applyId);
    assert.equal(
      own,
      (await client.workflow.getHandle(applyId).describe()).runId,
      'the run belongs to the execution the keeper started',
    );
    const sid = rig.souls[0]!.sid;
    const tag = randomBytes(4).toString('hex');
    const refusals = await Promise.all([
      foreign('incarnationRun', `foreign-run-${tag}`, [{ applyId, incarnation: name, operation: 'create' }]),
      foreign('incarnationPlan', `foreign-plan-${tag}`, [{ planId: applyId, incarnation: name, operation: 'create' }]),
      foreign('incarnationUpgrade', `foreign-up-${tag}`, [{ applyId, incarnation: name, toVersion: null }]),
      foreign('dispatchShard', `${applyId}-b1-s1`, [{ applyId, sids: [sid], batch: 1 }]),
    ]);
    for (const r of refusals.slice(0, 2)) {
      assert.equal(r.type, 'NotLockHolder', r.message);
      assert.match(
        r.message,
        new RegExp(`^workflow foreign-(run|plan)-${tag} is not run ${applyId.replace(/\./g, '\\.')}'s workflow`),
      );
    }
    // The upgrade workflow reports its refusal through its lock attempt, which is refused too.
    assert.equal(refusals[2]!.type, 'NotLockHolder', refusals[2]!.message);
    assert.match(refusals[3]!.message, /has no parent; a shard of run .* is started by the run's own workflow only/);
    assert.equal(refusals[3]!.type, 'NotLockHolder');
    assert.equal((await runRow(applyId)).status, 'running', 'the attempts ended nothing');

    assert.equal((await settledStatus(rig, name)).status, 'ready');
    const row = await runRow(applyId);
    assert.equal(row.status, 'succeeded');
    assert.equal(row.workflow_run_id, own, 'no other execution took the run');
    await rig.check(); // every step on the soul exactly once: nobody dispatched twice
  });

  it("refuses the same workflow id started again over the keeper's execution; the run is locked with the reason", async () => {
    const name = 'fence-reuse';
    const applyId = await rig.create(name);
    await midDispatch(rig, applyId);
    const own = await owner(applyId);
    const r = await foreign('incarnationRun', applyId, [{ applyId, incarnation: name, operation: 'create' }], {
      workflowIdConflictPolicy: 'TERMINATE_EXISTING',
    });
    assert.equal(r.type, 'NotLockHolder', r.message);
    assert.match(
      r.message,
      new RegExp(
        `belongs to workflow execution ${own}; execution [0-9a-f-]+ of the same workflow id was started by someone else`,
      ),
    );
    assert.equal((await settledStatus(rig, name)).status, 'error_locked');
    const row = await runRow(applyId);
    assert.equal(row.status, 'failed');
    assert.equal(row.workflow_run_id, own);
    assert.match(row.error, /^the run's workflow was terminated in Temporal\b.*; the run ended without committing$/);
  });

  it('locks a run whose workflow was terminated in Temporal within seconds, with who and why', async () => {
    const name = 'fence-terminated';
    const applyId = await rig.create(name);
    await midDispatch(rig, applyId);
    await client.workflow.getHandle(applyId).terminate('security drill');
    const inc = await settledStatus(rig, name, 30_000);
    assert.equal(inc.status, 'error_locked');
    const report = (await api(rig.k, 'GET', `/v1/incarnations/${name}/runs/${applyId}`)).body;
    assert.equal(report.status, 'failed');
    assert.match(
      report.error,
      /^the run's workflow was terminated in Temporal by .+: security drill; the run ended without committing$/,
    );
    // The operator's way out is the usual one: unlock with retry runs it again, to ready.
    const retry = await api(rig.k, 'POST', `/v1/incarnations/${name}/unlock`, { retry: true });
    assert.equal(retry.status, 202, JSON.stringify(retry.body));
    assert.equal((await settledStatus(rig, name)).status, 'ready');
  });
});
