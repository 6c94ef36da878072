// Retention (issue 31 "Retention", issue 36's PostgreSQL growth) on the real stack: a real keeper
// sets the cluster's pruning schedule in Temporal at start, and that schedule, not a direct call,
// removes plans, runs (with their hosts and steps) and activity rows older than retention.*, while
// recent ones and the runs an incarnation's state refers to stay.
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { Client } from '@temporalio/client';
import { appendActivity } from '../../db/repos/activity';
import { retentionScheduleId } from '../../runs/retention-schedule';
import { loadConfig } from '../../platform/config/load';
import { prepareKeeperConfig, startTestKeeper, type TestKeeper } from '../support/keeper';
import { serviceRepo } from '../support/service-repo';
import { connectStackTemporal } from '../support/temporal-client';
import { waitFor } from '../agents/harness';
import { clientFor } from '../api/helpers';

describe('retention: a Temporal schedule prunes old plans, runs and activity', function () {
  this.timeout(180_000);
  let k: TestKeeper;
  let temporal: Client;
  const api = (...args: Parameters<ReturnType<typeof clientFor>>) => clientFor(k)(...args);

  before(async () => {
    // Everything older than an hour goes, checked every second: old rows are made two hours old.
    k = await startTestKeeper({
      mutate: (doc) => {
        doc.retention = { plans: '1h', runs: '1h', activity: '1h', interval: '1s' };
      },
    });
    temporal = new Client({
      connection: await connectStackTemporal(),
      namespace: k.doc.temporal?.namespace ?? 'default',
    });
  });
  after(async () => {
    await temporal?.workflow
      .getHandle('keep.old-running')
      .terminate('test over')
      .catch(() => undefined);
    // The schedule is the cluster's and outlives keepers; this test's cluster ends here.
    await temporal?.schedule
      .getHandle(retentionScheduleId(k.doc.temporal.task_queue))
      .delete()
      .catch(() => undefined);
    await temporal?.connection.close();
    await k?.stop();
  });

  it('the keeper set the schedule at start, every retention.interval', async () => {
    const d = await temporal.schedule.getHandle(retentionScheduleId(k.doc.temporal.task_queue)).describe();
    assert.equal(d.spec.intervals?.[0]?.every, 1000);
    assert.equal(d.action.type, 'startWorkflow');
    assert.equal((d.action as { workflowType: string }).workflowType, 'keeperRetention');
  });

  it('removes what is older than its retention, with its hosts and steps, and keeps recent rows and the runs the incarnation refers to', async () => {
    const db = k.keeper.runtime.db;
    const repo = serviceRepo({ tags: ['v1'] });
    assert.equal((await api('POST', '/v1/services', { body: { name: 'motd', git: repo.url, ref: 'v1' } })).status, 201);
    const created = await api('POST', '/v1/incarnations', {
      body: {
        name: 'keep',
        service: 'motd',
        covens: ['nobody-here'],
        input: { root: path.join(os.tmpdir(), 'keep') },
        allow_empty: true,
      },
    });
    assert.equal(created.status, 202, created.text);
    const committed = created.body.apply_id as string;
    await waitFor(
      'keep to be ready',
      async () => ((await api('GET', '/v1/incarnations/keep')).body?.status === 'ready' ? true : undefined),
      60_000,
      200,
    );

    const old = new Date(Date.now() - 2 * 3600_000);
    const row = (applyId: string, kind: 'run' | 'plan', createdAt: Date, status = 'succeeded') => ({
      apply_id: applyId,
      incarnation: 'keep',
      operation: 'create',
      input: '{}',
      status,
      phase: 'done',
      kind,
      created_at: createdAt,
      ...(kind === 'plan' ? { expires_at: createdAt } : {}),
    });
    // The old running run has a live workflow (started on a queue no worker polls), or the keeper's
    // run watch would rightly end it as orphaned before the schedule looks (runs/run-watch.ts).
    await temporal.workflow.start('incarnationRun', {
      workflowId: 'keep.old-running',
      taskQueue: `${k.doc.temporal.task_queue}-idle`,
      args: [],
    });
    // The old run and its host row in one transaction: the schedule looks every second and would
    // otherwise prune the run between the two inserts (the host row's foreign key then refuses it).
    await db.transaction(async (trx) => {
      await trx('incarnation_runs').insert([
        row('keep.old-run', 'run', old),
        row('keep.old-plan', 'plan', old),
        row('keep.new-run', 'run', new Date()),
        row('keep.new-plan', 'plan', new Date()),
        row('keep.old-running', 'run', old, 'running'),
      ]);
      await trx('run_hosts').insert({ apply_id: 'keep.old-run', sid: 'h1.example.com', status: 'ok' });
    });
    // The committed run is made old too: the incarnation's state refers to it, so it stays.
    await db('incarnation_runs').where({ apply_id: committed }).update({ created_at: old });
    await appendActivity(db, {
      actor: 'admin',
      actorKind: 'operator',
      via: 'api',
      action: 'POST /v1/x',
      target: '/v1/x',
      status: 201,
    });
    await db('activity').where({ target: '/v1/x' }).update({ at: old });
    const recentActivity = Number((await db('activity').count<{ n: string }[]>({ n: '*' }))[0].n) - 1;

    await waitFor(
      'the schedule to prune the old rows',
      async () => {
        const left = await db('incarnation_runs')
          .whereIn('apply_id', ['keep.old-run', 'keep.old-plan'])
          .count<{ n: string }[]>({ n: '*' });
        const act = await db('activity').where({ target: '/v1/x' }).count<{ n: string }[]>({ n: '*' });
        return Number(left[0].n) === 0 && Number(act[0].n) === 0 ? true : undefined;
      },
      60_000,
      250,
    );

    const ids = (await db('incarnation_runs').where({ incarnation: 'keep' }).pluck('apply_id')).sort();
    assert.deepEqual(ids, [committed, 'keep.new-plan', 'keep.new-run', 'keep.old-running'].sort());
    assert.equal(
      Number((await db('run_hosts').where({ apply_id: 'keep.old-run' }).count<{ n: string }[]>({ n: '*' }))[0].n),
      0,
      'its hosts went with it',
    );
    assert.ok(
      Number((await db('activity').count<{ n: string }[]>({ n: '*' }))[0].n) >= recentActivity,
      'recent activity stays',
    );
    // The API still shows the incarnation and its committed run.
    assert.equal((await api('GET', `/v1/incarnations/keep/runs/${committed}`)).status, 200);
  });

  it('a retention.plans shorter than plans.ttl, or not a duration, is refused naming the field', async () => {
    const short = await prepareKeeperConfig({
      db: k.db,
      secretName: k.secretName,
      mutate: (doc) => {
        doc.retention = { plans: '30m' };
      },
    });
    const junk = await prepareKeeperConfig({
      db: k.db,
      secretName: k.secretName,
      mutate: (doc) => {
        doc.retention = { runs: 'forever' };
      },
    });
    try {
      assert.throws(() => loadConfig(short.configFile), /retention\.plans: must be at least plans\.ttl \(1h\)/);
      assert.throws(() => loadConfig(junk.configFile), /retention[./]runs/);
    } finally {
      for (const f of [short, junk]) fs.rmSync(f.dir, { recursive: true, force: true });
    }
  });
});
