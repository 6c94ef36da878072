// The first routing after a keeper restart (issue 30), on the real stack with real souls and the
// keeper in its own process: stopped and started again, a run started at once finds its
// souls still reconnecting (their backoff). Souls seen connected moments ago are waited for (a few
// seconds, runs/activities/locate-wait.ts), so every one that comes back is applied and none is
// `unknown`; a soul stopped for good is still `unknown` (never success) and the run still ends.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '../agents/harness';
import {
  api,
  gitRepoFrom,
  initRunKeeper,
  settled,
  spawnKeeper,
  startSouls,
  stopRunRig,
  tempDir,
  type KeeperProcess,
  type TestSoul,
} from './keeper';
import { releaseRuns, writeSlowService } from './slow-service';

describe('runs: the first routing after a keeper restart waits for souls that were connected', function () {
  this.timeout(300_000);
  let k: Awaited<ReturnType<typeof initRunKeeper>>;
  let keeper: KeeperProcess | undefined;
  let root: string;
  let souls: TestSoul[] = [];
  const note = (s: TestSoul) => {
    const f = path.join(root, s.sid, 'note0');
    return fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : null;
  };

  before(async () => {
    root = tempDir('first-route-');
    const src = path.join(root, 'slownote-src');
    writeSlowService(src);
    releaseRuns(root);
    const url = gitRepoFrom(src, path.join(root, 'slownote.git'), 'v1');
    k = await initRunKeeper();
    keeper = await spawnKeeper(k);
    souls = (await startSouls(k, path.join(root, 'souls'), [['fr'], ['fr'], ['fr']])).sort((a, b) =>
      a.sid.localeCompare(b.sid),
    );
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'slownote', git: url, ref: 'v1' })).status, 201);
  });
  after(() => stopRunRig({ souls, k, keeper, root }));

  it('a run started at once after the restart applies every soul that reconnects; a stopped soul is unknown', async () => {
    const created = await api(k, 'POST', '/v1/incarnations', {
      name: 'first-route',
      service: 'slownote',
      covens: ['fr'],
      input: { root, greeting: 'before' },
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.equal((await settled(k, 'first-route', 120_000)).status, 'ready');
    assert.deepEqual(souls.map(note), ['before\n', 'before\n', 'before\n']);

    // One soul stops for good; the keeper is restarted (SIGTERM: it closes the streams and gives up
    // the souls' leases, so nothing routes them until they reconnect to the new process).
    const [a, b, gone] = souls as [TestSoul, TestSoul, TestSoul];
    await gone.run.kill();
    keeper!.child.kill('SIGTERM');
    await keeper!.exited;
    // Down a few seconds, as a keeper being upgraded is: the souls' reconnect backoff grows to
    // seconds, so they come back a while after the new process is up, not before the run routes.
    await new Promise((r) => setTimeout(r, 6_000));
    keeper = await spawnKeeper(k);

    // At once: the souls are still in their reconnect backoff.
    const run = await api(k, 'POST', '/v1/incarnations/first-route/runs', {
      operation: 'create',
      input: { greeting: 'after' },
    });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    const report = await waitFor(
      'the run to end',
      async () => {
        const r = (await api(k, 'GET', `/v1/incarnations/first-route/runs/${run.body.apply_id}`)).body;
        return r.status !== 'running' ? r : undefined;
      },
      120_000,
      250,
    );
    const status = new Map(report.hosts.map((h: any) => [h.sid, `${h.status}${h.reason ? `: ${h.reason}` : ''}`]));
    // (A step repeated `until:` it holds reports the last send, `ok`; the files say it was applied.)
    for (const s of [a, b])
      assert.match(String(status.get(s.sid)), /^(ok|changed)$/, `${s.sid} reconnected and was applied`);
    assert.deepEqual([note(a), note(b)], ['after\n', 'after\n']);
    // The stopped soul is unknown, never success: one unknown host locks (no failure budget).
    assert.equal(status.get(gone.sid), 'unknown: the soul is not connected to any keeper');
    assert.equal(note(gone), 'before\n');
    assert.equal(report.status, 'failed');
    assert.equal((await settled(k, 'first-route')).status, 'error_locked');
  });
});
