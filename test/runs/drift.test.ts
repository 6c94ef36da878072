// Drift checks (issue 17, item 4; docs/drift.md) on the real stack with real souls and a real
// Temporal Schedule: a short interval; an edited file is reported as drift on the next check with
// its diff, and stays edited while auto_repair is off; with auto_repair on the check's plan is
// applied and the host is back as committed; turned off, the schedule is gone. The metric counts
// the drifted hosts. Checks that find nothing keep a count and only the last one's plan (issues 31, 36).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, ScheduleNotFoundError } from '@temporalio/client';
import { incarnationDetails } from '../../cli/incarnation-view';
import { sharedQueue } from '../../runs/queues';
import type { DriftCheckResult } from '../../runs/workflows/drift';
import type { TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { connectStackTemporal } from '../support/temporal-client';
import { waitFor } from '../agents/harness';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, stopRunRig, tempDir, type TestSoul } from './keeper';

describe('drift: scheduled checks of an incarnation against its committed state', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[] = [];
  const motd = (s: TestSoul) => path.join(root, s.sid, 'motd');
  const drift = async () => (await api(k, 'GET', '/v1/incarnations/drifty')).body.drift;

  before(async () => {
    root = tempDir('drift-');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'plan'),
      path.join(root, 'plan.git'),
      'v1',
    );
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['web'], ['web']]);
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'plan', git: url, ref: 'v1' })).status, 201);
    assert.equal(
      (await api(k, 'POST', '/v1/incarnations', { name: 'drifty', service: 'plan', covens: ['web'], input: { root } }))
        .status,
      202,
    );
    assert.equal((await settled(k, 'drifty')).status, 'ready');
  });
  after(async () => {
    await api(k, 'PUT', '/v1/incarnations/drifty/drift-check', { interval: null }).catch(() => undefined);
    await stopRunRig({ souls, k, root });
  });

  it('refuses an interval it cannot keep, naming the field; nothing is scheduled', async () => {
    for (const interval of ['1s', '31d', 'soon', 10]) {
      const r = await api(k, 'PUT', '/v1/incarnations/drifty/drift-check', { interval });
      assert.equal(r.status, 400, `${interval}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.errors[0].path, '/body/interval');
    }
    assert.deepEqual((await drift()).interval, null);
    assert.equal((await api(k, 'PUT', '/v1/incarnations/nobody/drift-check', { interval: '5m' })).status, 404);
  });

  it('N checks in sync leave one plan and a count of N; a check that found drift keeps its plan', async () => {
    const [, b] = souls as [TestSoul, TestSoul];
    // A schedule that does not fire during the test: the checks are started here, one after the
    // other, through the same workflow the schedule starts, so N is known.
    assert.equal((await api(k, 'PUT', '/v1/incarnations/drifty/drift-check', { interval: '30d' })).status, 200);
    const conn = await connectStackTemporal();
    const client = new Client({ connection: conn, namespace: k.doc.temporal?.namespace ?? 'default' });
    const check = async () => {
      const r = (await client.workflow.execute('incarnationDriftCheck', {
        taskQueue: sharedQueue(k.doc.temporal.task_queue),
        workflowId: `drift-test-${randomUUID()}`,
        args: [{ incarnation: 'drifty' }],
      })) as DriftCheckResult;
      assert.ok(r.planId, `a check that ran: ${JSON.stringify(r)}`);
      return r.planId;
    };
    const driftPlans = async () =>
      ((await api(k, 'GET', '/v1/incarnations/drifty/plans')).body.items as { plan_id: string }[])
        .map((p) => p.plan_id)
        .filter((id) => /^drifty\.create\.drift\./.test(id))
        .sort();
    const planStatus = async (id: string) => (await api(k, 'GET', `/v1/incarnations/drifty/plans/${id}`)).status;
    try {
      const before = (await drift()).checks_in_sync;
      assert.equal(before, 0, 'a new incarnation has no check in sync');
      const inSync = [await check(), await check(), await check()];
      const d = await drift();
      assert.deepEqual(
        [d.status, d.checks_in_sync, d.plan_id, d.last_in_sync_at],
        ['in_sync', 3, inSync[2], d.checked_at],
        JSON.stringify(d),
      );
      assert.deepEqual(await driftPlans(), [inSync[2]], 'only the newest check in sync keeps its plan');
      assert.equal(await planStatus(inSync[0] as string), 404);
      assert.equal(await planStatus(inSync[2] as string), 200, 'the last check is still shown');
      assert.match(
        incarnationDetails((await api(k, 'GET', '/v1/incarnations/drifty')).body),
        new RegExp(`^drift_in_sync:\\s+3 checks, the last at ${d.last_in_sync_at}$`, 'm'),
      );

      // Drift found: the plan is kept (with its diff), and the last check in sync before it goes.
      fs.writeFileSync(motd(b), 'edited by hand\n');
      const drifted = [await check(), await check()];
      const x = await drift();
      assert.deepEqual([x.status, x.drifted_sids, x.checks_in_sync], ['drifted', [b.sid], 3]);
      assert.equal(x.last_in_sync_at, d.last_in_sync_at, 'the last time it was in sync stays');
      assert.deepEqual(await driftPlans(), [...drifted].sort());

      // Put back: counted again; the drifted checks' plans stay for retention.plans.
      fs.writeFileSync(motd(b), 'hello\n');
      const after = [await check(), await check()];
      const y = await drift();
      assert.deepEqual([y.status, y.checks_in_sync, y.plan_id], ['in_sync', 5, after[1]]);
      assert.deepEqual(await driftPlans(), [...drifted, after[1]].sort());
    } finally {
      fs.writeFileSync(motd(b), 'hello\n');
      await conn.close();
    }
  });

  it('reports an edited file as drift with the diff on the next check, and leaves it while auto_repair is off', async () => {
    const [, b] = souls as [TestSoul, TestSoul];
    const on = await api(k, 'PUT', '/v1/incarnations/drifty/drift-check', { interval: '2s' });
    assert.equal(on.status, 200, JSON.stringify(on.body));
    assert.deepEqual([on.body.drift.interval, on.body.drift.auto_repair], ['2s', false]);
    await waitFor('a first check: in sync', async () => (await drift()).status === 'in_sync', 60_000, 250);

    fs.writeFileSync(motd(b), 'edited by hand\n');
    const d = await waitFor(
      'the edit reported as drift',
      async () => {
        const x = await drift();
        return x.status === 'drifted' ? x : undefined;
      },
      60_000,
      250,
    );
    assert.deepEqual(d.drifted_sids, [b.sid]);
    const plan = (await api(k, 'GET', `/v1/incarnations/drifty/plans/${d.plan_id}`)).body;
    assert.equal(plan.operation, 'create', 'the last committed operation');
    const host = plan.hosts.find((h: any) => h.sid === b.sid);
    assert.equal(
      host.steps[1].diff.content.unified,
      [`--- a${motd(b)}`, `+++ b${motd(b)}`, '@@ -1,1 +1,1 @@', '-edited by hand', '+hello', ''].join('\n'),
    );
    const metrics = await (await fetch(`${k.metricsUrl}/metrics`)).text();
    assert.match(metrics, /^keeper_drifted_hosts\{incarnation="drifty",kid="[^"]+"\} 1$/m);

    // Off: two more checks later, the file is still as the operator left it, the incarnation untouched.
    const checked = d.checked_at;
    await waitFor(
      'two more checks',
      async () => {
        const x = await drift();
        return x.checked_at !== checked && x.status === 'drifted' ? x : undefined;
      },
      60_000,
      250,
    );
    assert.equal(fs.readFileSync(motd(b), 'utf8'), 'edited by hand\n');
    assert.equal((await api(k, 'GET', '/v1/incarnations/drifty/runs')).body.items.length, 1);
  });

  it('with auto_repair the check applies its plan and the host is back as committed; off removes the schedule', async () => {
    const [, b] = souls as [TestSoul, TestSoul];
    assert.equal(
      (await api(k, 'PUT', '/v1/incarnations/drifty/drift-check', { interval: '2s', auto_repair: true })).status,
      200,
    );
    await waitFor('the drifted host repaired', async () => fs.readFileSync(motd(b), 'utf8') === 'hello\n', 90_000, 250);
    const repair = (await api(k, 'GET', '/v1/incarnations/drifty/runs')).body.items[0];
    assert.match(repair.plan_id, /^drifty\.create\.drift\./, "the repair applied a drift check's plan");
    await waitFor(
      'the repair committed and a later check in sync',
      async () => (await drift()).status === 'in_sync',
      60_000,
      250,
    );
    assert.equal((await api(k, 'GET', `/v1/incarnations/drifty/runs/${repair.apply_id}`)).body.status, 'succeeded');

    const lastInSync = (await drift()).plan_id;
    const off = await api(k, 'PUT', '/v1/incarnations/drifty/drift-check', { interval: null });
    assert.equal(off.status, 200);
    assert.deepEqual(
      [off.body.drift.interval, off.body.drift.status, off.body.drift.drifted_sids],
      [null, 'unchecked', []],
    );
    // The check in sync shown until now is not kept once checks are off; their count is.
    assert.equal((await api(k, 'GET', `/v1/incarnations/drifty/plans/${lastInSync}`)).status, 404);
    assert.ok(off.body.drift.checks_in_sync > 5, JSON.stringify(off.body.drift));
    const conn = await connectStackTemporal();
    try {
      const client = new Client({ connection: conn, namespace: k.doc.temporal?.namespace ?? 'default' });
      await assert.rejects(
        client.schedule.getHandle(`keeper-drift-${k.doc.temporal.task_queue}-drifty`).describe(),
        ScheduleNotFoundError,
      );
    } finally {
      await conn.close();
    }
  });
});
