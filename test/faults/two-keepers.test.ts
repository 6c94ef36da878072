// Fault: one of two keepers (kid A and B, one database, cache and Temporal) killed with SIGKILL
// during a run whose souls are all on A. The souls are configured with both endpoints, A first by
// priority: they fail over to B, B's dispatch worker takes the steps A never finished, and the run
// finishes exactly once (the history checker: each step once in each ledger, one commit).
import assert from 'node:assert/strict';
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

  it('moves every soul to B and finishes the run once', async () => {
    const b = rig.b!;
    for (const s of rig.souls)
      assert.equal(
        (await api(rig.k, 'GET', `/v1/souls/${s.sid}`)).body.connected_kid,
        rig.k.config.kid,
        'on A by priority',
      );
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
            return r.body.status === 'connected' && r.body.connected_kid === b.access.config.kid;
          },
          60_000,
          100,
        ),
      ),
    );
    console.log(`      every soul on keeper B ${Date.now() - t0} ms after A was killed`);
    const first = await settleAndCheck(rig, 'failover');
    console.log(`      the run ended ${first} ${Date.now() - t0} ms after A was killed`);
    const runs = (await rig.check()).runs.filter((r) => r.status === 'succeeded');
    assert.equal(runs.length, 1, 'one run committed');
  });
});
