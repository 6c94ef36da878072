// Fault: the Temporal dev server stopped and started during a run. The keeper runs against a private
// dev server whose state is a SQLite file in the test's temp dir (a persistent store, as production
// has), so the run's workflow survives the restart. Expected: the keeper's worker reconnects, the
// run resumes where its history left it and finishes ready, each step once.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startPrivateTemporal, type PrivateTemporal } from './private-deps';
import { tempDir } from '../runs/keeper';
import { midDispatch, settleAndCheck, startRig, type Rig } from './rig';

describe('fault: the Temporal dev server stopped and started during a run', function () {
  this.timeout(300_000);
  let temporal: PrivateTemporal;
  let rig: Rig;
  let dir: string;

  before(async () => {
    dir = tempDir('faults-temporal-');
    temporal = await startPrivateTemporal(dir);
    rig = await startRig({
      mutate: (doc) => {
        // The private dev server is plain gRPC, whatever the stack's Temporal runs with.
        doc.temporal.address = temporal.address;
        delete doc.temporal.tls;
      },
      covens: [['web'], ['web']],
      steps: 4,
    });
  });
  after(async () => {
    await rig?.stop();
    await temporal?.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('resumes the run after the restart and finishes it ready, each step once', async () => {
    const applyId = await rig.create('temporal-fault');
    await midDispatch(rig, applyId);
    const t0 = Date.now();
    await temporal.stop();
    await new Promise((r) => setTimeout(r, 2000));
    await temporal.start();
    const up = Date.now();
    const first = await settleAndCheck(rig, 'temporal-fault');
    console.log(`      Temporal down ${up - t0} ms; the run ended ${first} ${Date.now() - up} ms after it was back`);
    assert.equal(first, 'ready', 'the run resumed from its history and finished without an operator');
  });
});
