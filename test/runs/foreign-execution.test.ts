// The execution fence (issue 45 M-2, runs/activities/execution-fence.ts): a oneOffExecution workflow
// started on Temporal by anyone but the keeper's API changes nothing and reaches no host. Started
// here with a client of our own on the keeper's task queue, against a real keeper and real souls:
// with the args of a finished execution and its own workflow id (re-running it on a host outside
// its selection, the probe of issue 45), under another workflow id, and for a running execution
// (a row written by hand) naming a host outside its recorded selection.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, type Connection, WorkflowFailedError } from '@temporalio/client';
import knex, { type Knex } from 'knex';
import { sharedQueue } from '../../runs/queues';
import type { TestKeeper } from '../support/keeper';
import { connectStackTemporal } from '../support/temporal-client';
import { api, startRunKeeper, startSouls, tempDir, waitFor, type TestSoul } from './keeper';

describe('executions: a workflow started outside the API is refused by every activity', function () {
  this.timeout(240_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[];
  let db: Knex;
  let connection: Connection;
  let client: Client;

  before(async () => {
    root = tempDir('foreign-exec-');
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['fa'], ['fb']]);
    db = knex({ client: 'pg', connection: k.db.dsn, pool: { min: 0, max: 2 } });
    connection = await connectStackTemporal();
    client = new Client({ connection, namespace: 'default' });
  });
  after(async () => {
    await connection?.close();
    await db?.destroy();
    await Promise.all((souls ?? []).map((s) => s.run.kill()));
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const snapshot = async () => ({
    executions: await db('executions').select('*').orderBy('id'),
    hosts: await db('execution_hosts').select('*').orderBy(['execution_id', 'sid']),
  });

  async function startForeign(
    workflowId: string,
    executionId: string,
    sids: string[],
  ): Promise<Error & { type?: string }> {
    const handle = await client.workflow.start('oneOffExecution', {
      workflowId,
      taskQueue: sharedQueue(k.config.temporal.task_queue),
      args: [{ executionId, sids, batch: sids.length, timeoutMs: 30_000 }],
    });
    const err = await handle.result().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    assert.ok(err instanceof WorkflowFailedError, `the foreign workflow must fail, got ${String(err)}`);
    const cause = err.cause?.cause as (Error & { type?: string }) | undefined;
    assert.equal(cause?.type, 'ForeignExecution', String(cause));
    return cause!;
  }

  it('re-running a finished cluster-admin execution with its own workflow id, or another, reaches no host', async () => {
    const [a, b] = souls;
    const marker = path.join(root, 'ran.log');
    const r = await api(k, 'POST', '/v1/executions', {
      module: 'core.cmd.run',
      params: { argv: ['sh', '-c', 'echo ran >> "$1"', 'sh', marker] },
      target: { sids: [a!.sid] },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const id = r.body.id as string;
    await waitFor(
      `execution ${id}`,
      async () => (await api(k, 'GET', `/v1/executions/${id}`)).body.status === 'done' || undefined,
      90_000,
      200,
    );
    assert.equal(fs.readFileSync(marker, 'utf8'), 'ran\n');
    const before = await snapshot();

    // Its own workflow id (Temporal lets a closed id be used again) and a host outside its selection.
    const same = await startForeign(`execution-${id}`, id, [a!.sid, b!.sid]);
    assert.match(
      same.message,
      new RegExp(
        `execution ${id} belongs to workflow run \\S+; run \\S+ of the same workflow id was started by someone else`,
      ),
    );
    const other = await startForeign(`foreign-${randomBytes(4).toString('hex')}`, id, [b!.sid]);
    assert.match(other.message, new RegExp(`is not execution ${id}'s workflow \\(execution-${id}\\)`));

    assert.deepEqual(await snapshot(), before, 'no execution or answer changed');
    assert.equal(fs.readFileSync(marker, 'utf8'), 'ran\n', 'no host ran the command again');
  });

  it('a running execution is acted for on its recorded hosts only', async () => {
    const [a, b] = souls;
    const marker = path.join(root, 'forged.log');
    // A running execution of host A whose workflow never started (written by hand, as only a bug or
    // a forged row could): a foreign workflow under its id may not reach host B.
    const id = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    await db('executions').insert({
      id,
      aid: 'admin',
      module: 'core.cmd.run',
      params: JSON.stringify({ argv: ['sh', '-c', 'echo ran >> "$1"', 'sh', marker] }),
      target: JSON.stringify({ sids: [a!.sid] }),
      sids: [a!.sid],
      dry_run: false,
      timeout_ms: 30_000,
      output_cap: 65536,
      batch: 1,
      status: 'running',
    });
    const before = await snapshot();
    const err = await startForeign(`execution-${id}`, id, [b!.sid]);
    assert.match(err.message, new RegExp(`host ${b!.sid} is not in execution ${id}'s selection; nothing was sent`));
    assert.deepEqual((await snapshot()).hosts, before.hosts, 'no answer was written');
    assert.equal(fs.existsSync(marker), false, 'host B ran nothing');
  });
});
