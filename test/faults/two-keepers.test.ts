// Fault: one of two keepers (kid A and B, one database, cache and Temporal) killed with SIGKILL
// during a run whose souls are all on A. The souls are configured with both endpoints, A first by
// priority: they fail over to B, B's dispatch worker takes the steps A never finished, and the run
// finishes exactly once (the history checker: each step once in each ledger, one commit).
// Failover in seconds (issue 33, runs/failover.ts): B ends A's dispatch activity itself once A's kid
// claim lapses (`KeeperLost`, naming both keepers), so the run does not wait for the heartbeat
// timeout: the history shows that failure and no timed-out attempt. The times are printed, not asserted.
import assert from 'node:assert/strict';
import { Client } from '@temporalio/client';
import { connectStackTemporal } from '../support/temporal-client';
import { api, waitFor } from '../runs/keeper';
import { midDispatch, settleAndCheck, startRig, type Rig } from './rig';

describe('fault: keeper A killed (SIGKILL) during a run, its souls fail over to keeper B', function () {
  this.timeout(300_000);
  let rig: Rig;

  before(async () => {
    rig = await startRig({ second: true, covens: [['web'], ['web']], steps: 4 });
  });
  after(async () => {
    await rig?.stop();
  });

  it('moves every soul to B, B ends A’s dispatch at once, and the run finishes once', async () => {
    const b = rig.b!;
    const kidA = rig.k.config.kid;
    const kidB = b.access.config.kid;
    for (const s of rig.souls)
      assert.equal((await api(rig.k, 'GET', `/v1/souls/${s.sid}`)).body.connected_kid, kidA, 'on A by priority');
    const applyId = await rig.create('failover');
    await midDispatch(rig, applyId);
    rig.keeper.child.kill('SIGKILL');
    await rig.keeper.exited;
    const t0 = Date.now();
    // From here the operator talks to B, the keeper that is left.
    rig.k.baseUrl = b.access.baseUrl;
    await Promise.all(
      rig.souls.map((s) =>
        waitFor(
          `${s.sid} on keeper B`,
          async () => {
            const r = await api(b.access, 'GET', `/v1/souls/${s.sid}`);
            return r.body.status === 'connected' && r.body.connected_kid === kidB;
          },
          60_000,
          100,
        ),
      ),
    );
    console.log(`      every soul on keeper B ${Date.now() - t0} ms after A was killed`);
    const first = await settleAndCheck(rig, 'failover');
    console.log(`      the run ended ${first} ${Date.now() - t0} ms after A was killed`);
    assert.equal(first, 'ready', 'the run ends ready with no operator action');
    const runs = (await rig.check()).runs.filter((r) => r.status === 'succeeded');
    assert.equal(runs.length, 1, 'one run committed');

    // How the dispatch on A ended: failed by B (KeeperLost), not by its heartbeat timeout.
    const connection = await connectStackTemporal();
    try {
      const history = await new Client({ connection, namespace: 'default' }).workflow.getHandle(applyId).fetchHistory();
      const events = history.events ?? [];
      const lost = events.filter(
        (e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === 'KeeperLost',
      );
      assert.equal(lost.length, 1, 'one dispatch activity ended by the keeper the souls moved to');
      const message = lost[0].activityTaskFailedEventAttributes!.failure!.message ?? '';
      assert.match(message, new RegExp(`keeper ${kidA} was lost`), 'the failure names the lost keeper');
      assert.match(message, new RegExp(`keeper ${kidB}`), 'and the keeper that ended it');
      assert.equal(
        events.filter((e) => e.activityTaskTimedOutEventAttributes).length,
        0,
        'no activity waited for its timeout',
      );
      const at = (e: (typeof events)[number]) =>
        Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
      console.log(`      A's dispatch ended by B ${at(lost[0]) - t0} ms after the kill`);
      const onB = events.find(
        (e) => at(e) > t0 && e.activityTaskStartedEventAttributes?.identity === `keeper-${kidB}-dispatch`,
      );
      if (onB) console.log(`      the hosts' dispatch started on B ${at(onB) - t0} ms after the kill`);
    } finally {
      await connection.close();
    }
  });
});
