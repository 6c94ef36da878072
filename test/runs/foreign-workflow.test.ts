// A workflow started on Temporal by anyone but the keeper's API changes nothing (issue 13, item 6):
// every run activity first checks that its apply_id is the run holding the incarnation's lock
// (db/repos/run-lock.ts). Started here with a client of our own on the keeper's task queue, with a
// made-up apply_id, a finished run's, and the failed run an error_locked incarnation points at.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import knex, { type Knex } from 'knex';
import type { TestKeeper } from '../support/keeper';
import { connectStackTemporal } from '../support/temporal-client';
import { repoRoot } from '../support/repo';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, stopRunRig, tempDir, type TestSoul } from './keeper';

describe('runs: a workflow started outside the API is refused by every activity', function () {
  this.timeout(240_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[];
  let db: Knex;
  let connection: Connection;
  let client: Client;

  before(async () => {
    root = tempDir('foreign-');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'note'),
      path.join(root, 'note.git'),
      'v1',
    );
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['web']]);
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'foreign', git: url, ref: 'v1' })).status, 201);
    db = knex({ client: 'pg', connection: k.db.dsn, pool: { min: 0, max: 2 } });
    connection = await connectStackTemporal();
    client = new Client({ connection, namespace: 'default' });
  });
  after(async () => {
    await connection?.close();
    await db?.destroy();
    await stopRunRig({ souls, k, root });
  });

  /** Everything a run can change: incarnations, runs, plans, host and step reports, history. */
  const snapshot = async () => ({
    incarnations: await db('incarnations').select('*').orderBy('name'),
    runs: await db('incarnation_runs').select('*').orderBy('apply_id'),
    plans: await db('run_plans').count({ n: '*' }),
    hosts: await db('run_hosts').select('*').orderBy(['apply_id', 'sid']),
    steps: await db('run_steps').count({ n: '*' }),
    history: await db('incarnation_history').count({ n: '*' }),
  });

  async function startForeign(applyId: string, incarnation: string): Promise<Error> {
    const handle = await client.workflow.start('incarnationRun', {
      workflowId: `foreign-${randomBytes(4).toString('hex')}`,
      taskQueue: k.config.temporal.task_queue,
      args: [{ applyId, incarnation, operation: 'create' }],
    });
    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    assert.ok(err instanceof WorkflowFailedError, `the foreign workflow must fail, got ${String(err)}`);
    // The activity's failure, as Temporal stores it, keeps its message but none of the keeper
    // host's paths: its stack is relative to the install folder (runs/activities/keeper-errors.ts).
    const failed = ((await handle.fetchHistory()).events ?? [])
      .map((e) => e.activityTaskFailedEventAttributes?.failure)
      .filter((f) => f !== undefined && f !== null);
    assert.ok(failed.length > 0, 'an activity failed');
    for (const f of failed) {
      assert.match(f!.message ?? '', /\(on keeper /);
      assert.match(f!.stackTrace ?? '', /^\s+at .*dist\/runs\//m, f!.stackTrace ?? '');
      assert.ok(!(f!.stackTrace ?? '').includes(repoRoot()), `an absolute path in ${f!.stackTrace}`);
    }
    return err;
  }

  it('changes nothing for a ready and an error_locked incarnation, whatever apply_id it names', async () => {
    let r = await api(k, 'POST', '/v1/incarnations', {
      name: 'fw-ready',
      service: 'foreign',
      covens: ['web'],
      input: { root, greeting: 'one', file: 'one' },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const readyRun = r.body.apply_id as string;
    assert.equal((await settled(k, 'fw-ready')).status, 'ready');
    r = await api(k, 'POST', '/v1/incarnations', {
      name: 'fw-locked',
      service: 'foreign',
      covens: ['web'],
      input: { root, greeting: 'two', file: 'two', broken: true },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const lockedRun = r.body.apply_id as string;
    assert.equal((await settled(k, 'fw-locked')).status, 'error_locked');

    const marker = path.join(root, souls[0].sid, 'one');
    // Nothing rendered shows as no new row in run_plans (a render stores its plan before anything is sent).
    const before = { db: await snapshot(), mtime: fs.statSync(marker).mtimeMs };
    const attempts: [string, string, RegExp][] = [
      [readyRun, 'fw-ready', /has already ended \(succeeded\)/],
      [lockedRun, 'fw-locked', /has already ended \(failed\)/],
      [`fw-locked.create.${Date.now().toString(36)}-made-up`, 'fw-locked', /does not exist/],
    ];
    for (const [applyId, incarnation, reason] of attempts) {
      const err = await startForeign(applyId, incarnation);
      const cause = (err as WorkflowFailedError).cause?.cause as (Error & { type?: string }) | undefined;
      assert.equal(cause?.type, 'NotLockHolder', `${applyId}: ${String(cause)}`);
      assert.match(cause!.message, reason);
    }
    assert.deepEqual(await snapshot(), before.db, 'no row of incarnations, runs, plans, reports or history changed');
    assert.equal(fs.statSync(marker).mtimeMs, before.mtime, 'the soul was sent nothing');
    assert.ok(!fs.existsSync(path.join(root, souls[0].sid, 'two')));
  });

  it('is refused even with the apply_id of a run that is running for the other incarnation', async () => {
    // A run row that is `running` but is not its incarnation's lock holder: written by hand, as only
    // a bug or a forged row could make one; the check looks at the incarnation, not at the row alone.
    const fake = `fw-ready.create.${Date.now().toString(36)}-forged`;
    await db('incarnation_runs').insert({
      apply_id: fake,
      incarnation: 'fw-ready',
      operation: 'create',
      input: JSON.stringify({ root, greeting: 'three', file: 'three' }),
      status: 'running',
      phase: 'queued',
      service_ref: 'v1',
    });
    const before = { db: await snapshot() };
    const err = await startForeign(fake, 'fw-ready');
    const cause = (err as WorkflowFailedError).cause?.cause as (Error & { type?: string }) | undefined;
    assert.equal(cause?.type, 'NotLockHolder');
    assert.match(cause!.message, /does not hold incarnation fw-ready's lock \(the incarnation is ready\)/);
    assert.deepEqual(await snapshot(), before.db);
    assert.ok(!fs.existsSync(path.join(root, souls[0].sid, 'three')));
  });
});
