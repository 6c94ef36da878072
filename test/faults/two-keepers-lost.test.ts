// Fault: keeper A killed (SIGKILL) mid-run while its souls are frozen (SIGSTOP), so none of them can
// reach keeper B. B must still notice A is dead: it watches the other keepers' kid claims on a timer
// (runs/failover.ts, once a second), not only when a soul arrives, and ends A's dispatch with
// `KeeperLost` once A's claim lapses. Under load the souls' arrival came seconds after the lapse
// (issue 33); here it never comes until the souls are resumed, and the failure is already there.
// Then the souls resume, reconnect to B, the hosts' re-routing finds them, and the run ends ready
// with each step once (the history checker).
import assert from 'node:assert/strict';
import { Client } from '@temporalio/client';
import { connectStackTemporal } from '../support/temporal-client';
import { api, waitFor } from '../runs/keeper';
import { midDispatch, settleAndCheck, startRig, type Rig } from './rig';

describe('fault: keeper A killed while its souls are frozen: B ends A’s dispatch without any soul arriving', function () {
  this.timeout(300_000);
  let rig: Rig;

  before(async () => {
    rig = await startRig({ second: true, covens: [['web'], ['web']], steps: 2 });
  });
  after(async () => {
    for (const s of rig?.souls ?? []) if (s.run.child.exitCode === null) s.run.child.kill('SIGCONT');
    await rig?.stop();
  });

  it('records KeeperLost for A’s dispatch while no soul is on B, then the run ends ready once the souls are back', async () => {
    const b = rig.b!;
    const kidA = rig.k.config.kid;
    const kidB = b.access.config.kid;
    const applyId = await rig.create('lost');
    await midDispatch(rig, applyId);
    for (const s of rig.souls) s.run.child.kill('SIGSTOP');
    rig.keeper.child.kill('SIGKILL');
    await rig.keeper.exited;
    rig.k.baseUrl = b.access.baseUrl;

    const connection = await connectStackTemporal();
    try {
      const handle = new Client({ connection, namespace: 'default' }).workflow.getHandle(applyId);
      const lost = await waitFor(
        'A’s dispatch ended as KeeperLost',
        async () =>
          ((await handle.fetchHistory()).events ?? []).find(
            (e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === 'KeeperLost',
          ),
        60_000,
        200,
      );
      const message = lost.activityTaskFailedEventAttributes!.failure!.message ?? '';
      assert.match(message, new RegExp(`keeper ${kidA} was lost`), 'the failure names the lost keeper');
      assert.match(message, new RegExp(`keeper ${kidB}`), 'and the keeper that ended it');
      // Still frozen: not one soul reached B, so the failure came from B's own watch of A's claim.
      for (const s of rig.souls)
        assert.notEqual((await api(b.access, 'GET', `/v1/souls/${s.sid}`)).body.connected_kid, kidB, s.sid);

      for (const s of rig.souls) s.run.child.kill('SIGCONT');
      assert.equal(await settleAndCheck(rig, 'lost'), 'ready', 'the run ends ready with no operator action');
      assert.equal((await rig.check()).runs.filter((r) => r.status === 'succeeded').length, 1, 'one run committed');
      const events = (await handle.fetchHistory()).events ?? [];
      assert.equal(
        events.filter((e) => e.activityTaskTimedOutEventAttributes).length,
        0,
        'no activity waited for its heartbeat timeout',
      );
    } finally {
      await connection.close();
    }
  });
});
