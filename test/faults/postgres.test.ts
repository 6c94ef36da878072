// Fault: PostgreSQL stopped and started (a fast shutdown: every connection dropped, open transactions
// aborted) during a live run: as the run starts (its render: the registry and the service read, no
// step sent yet), mid-dispatch, and as the run reaches its commit. The keeper
// runs on a private cluster (its own initdb on a free port), never the stack's. Expected: the run
// ends ready or error_locked with a reason, never committed with a host not done, each step once.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { ledgerLines } from './history';
import { startPrivatePostgres, type PrivatePostgres } from './private-deps';
import { tempDir, waitFor } from '../runs/keeper';
import { midDispatch, settleAndCheck, startRig, type Rig } from './rig';

const STEPS = 4;

describe('fault: PostgreSQL restarted during a run', function () {
  this.timeout(300_000);
  let pg: PrivatePostgres;
  let rig: Rig;
  let dir: string;

  before(async () => {
    dir = tempDir('faults-pg-');
    pg = await startPrivatePostgres(dir);
    rig = await startRig({ db: await pg.database(), covens: [['web'], ['web']], steps: STEPS });
  });
  after(async () => {
    await rig?.stop();
    await pg?.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const restart = async (downMs: number) => {
    const t0 = Date.now();
    await pg.stop();
    await new Promise((r) => setTimeout(r, downMs));
    await pg.start();
    return Date.now() - t0;
  };

  it('during render (stopped as the run is accepted, before any step): the run ends ready or locked, each step once', async () => {
    const applyId = await rig.create('pg-render');
    // At once after the 202: the workflow's first activities (render) meet the outage.
    const t0 = Date.now();
    await pg.stop();
    const sent = rig.souls.reduce((a, s) => a + ledgerLines(s, applyId).length, 0);
    assert.equal(sent, 0, 'no step had reached a soul when PostgreSQL stopped: the fault hit the render');
    await new Promise((r) => setTimeout(r, 3000));
    await pg.start();
    const down = Date.now() - t0;
    const t1 = Date.now();
    const first = await settleAndCheck(rig, 'pg-render');
    console.log(
      `      PostgreSQL down ${down} ms from the run's start (render); the run ended ${first} ${Date.now() - t1} ms after it was back`,
    );
  });

  it('mid-dispatch: the run ends ready or locked, each step once, nothing half-committed', async () => {
    const applyId = await rig.create('pg-dispatch');
    await midDispatch(rig, applyId);
    const down = await restart(2000);
    const t0 = Date.now();
    const first = await settleAndCheck(rig, 'pg-dispatch');
    console.log(
      `      PostgreSQL down ${down} ms mid-dispatch; the run ended ${first} ${Date.now() - t0} ms after it was back`,
    );
  });

  it('at the commit (every step done on every host): the run ends ready or locked, never half-committed', async () => {
    const applyId = await rig.create('pg-commit');
    // The last step's confirming send recorded on every soul: what remains is the report and commit.
    await waitFor(
      'every step done on every soul',
      async () => rig.souls.every((s) => ledgerLines(s, `${applyId}:u2`).some((l) => l.index === STEPS - 1)),
      90_000,
      50,
    );
    const down = await restart(3000);
    const t0 = Date.now();
    const first = await settleAndCheck(rig, 'pg-commit');
    console.log(
      `      PostgreSQL down ${down} ms at the commit; the run ended ${first} ${Date.now() - t0} ms after it was back`,
    );
  });
});
