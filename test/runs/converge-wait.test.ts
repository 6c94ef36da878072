// An operator's run while the converger's run of the same incarnation is in flight (issue 30, "New
// hosts in one run"), on the real stack with real souls: it is accepted (202 naming the converge run
// it waits for), starts when that run ends, and covers every host of the covens, the new ones
// included; a second operator's run meanwhile is the lock's 409. When the converge run locks the
// incarnation, the waiting run ends failed with the reason and runs nothing. An upgrade waits the same
// way, and migrates nothing when that run locks. Each converge run is held at the service's gate
// (slow-service.ts) until the test's request has been accepted, then released.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { endpointOf, soulInit, soulRun, uniqueSid, waitFor, waitForStatus, writeSoulConfig } from '../agents/harness';
import { convergeRunning, holdRuns, releaseRuns, runsOf, writeSlowService } from './slow-service';
import {
  api,
  commitVersion3,
  gitRepoFrom,
  initRunKeeper,
  settled,
  spawnKeeper,
  startRunKeeper,
  startSouls,
  stopRunRig,
  tempDir,
  type KeeperProcess,
  type TestSoul,
} from './keeper';

describe('runs: an operator run during a converge run waits for it instead of a 409', function () {
  this.timeout(240_000);
  let k: TestKeeper;
  let root: string;
  const souls: TestSoul[] = [];

  before(async () => {
    root = tempDir('converge-wait-');
    const src = path.join(root, 'slownote-src');
    writeSlowService(src);
    releaseRuns(root);
    const slow = gitRepoFrom(src, path.join(root, 'slownote.git'), 'v1');
    k = await startRunKeeper();
    souls.push(...(await startSouls(k, path.join(root, 'souls'), [['web'], ['web']])));
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'slownote', git: slow, ref: 'v1' })).status, 201);
  });
  after(() => stopRunRig({ souls, k, root }));
  /** A soul whose sid the test chose (an incarnation's `fail` names it), registered, onboarded and connected. */
  const connectSoul = async (sid: string, coven: string) => {
    const reg = await api(k, 'POST', '/v1/souls', { sid, transport: 'agent', covens: [coven] });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    const dir = path.join(root, 'souls-stalled', sid);
    const config = writeSoulConfig(dir, sid, [endpointOf(k)]);
    assert.equal((await soulInit(sid, config, reg.body.bootstrap_token)).code, 0);
    souls.push({ sid, config, dir, run: soulRun(sid, config) });
    await waitForStatus(k, sid, 'connected', 20_000);
  };

  it('is accepted naming the converge run, ends ready on every host (the new ones too); a second run is 409', async () => {
    const created = await api(k, 'POST', '/v1/incarnations', {
      name: 'wait-web',
      service: 'slownote',
      covens: ['web'],
      input: { root, greeting: 'first' },
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.equal((await settled(k, 'wait-web')).status, 'ready');

    holdRuns(root);
    const fresh = await startSouls(k, path.join(root, 'souls-new'), [['web'], ['web']]);
    souls.push(...fresh);
    const converge = await convergeRunning(k, 'wait-web');

    const run = await api(k, 'POST', '/v1/incarnations/wait-web/runs', {
      operation: 'create',
      input: { greeting: 'second' },
    });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    assert.equal(run.body.waits_for, converge.apply_id, 'the answer names the converge run it waits for');
    const second = await api(k, 'POST', '/v1/incarnations/wait-web/runs', { operation: 'create' });
    assert.equal(second.status, 409, 'a second operator run meanwhile is the lock');
    assert.match(second.body.detail, new RegExp(`${run.body.apply_id} already waits for it`));
    releaseRuns(root);

    const inc = await settled(k, 'wait-web', 120_000);
    assert.equal(inc.status, 'ready');
    assert.equal(inc.apply_id, run.body.apply_id, "the operator's run was the last one");
    const convergeReport = (await api(k, 'GET', `/v1/incarnations/wait-web/runs/${converge.apply_id}`)).body;
    assert.equal(convergeReport.status, 'succeeded', 'the converge run finished, not cut short');
    const report = (await api(k, 'GET', `/v1/incarnations/wait-web/runs/${run.body.apply_id}`)).body;
    assert.equal(report.status, 'succeeded', JSON.stringify(report.error));
    assert.equal(report.waits_for, converge.apply_id);
    assert.deepEqual(
      report.hosts.map((h: any) => h.sid).sort(),
      souls.map((s) => s.sid).sort(),
      "the operator's run covered every host of the coven, the new ones included",
    );
    for (const s of souls)
      assert.equal(fs.readFileSync(path.join(root, s.sid, 'note0'), 'utf8'), 'second\n', `${s.sid} has the new note`);
    // No converge run was started after the operator's run: it had the new hosts.
    const after = (await runsOf(k, 'wait-web')).filter((r) => r.created_at > report.created_at);
    assert.deepEqual(after, []);
  });

  it('ends failed, running nothing, when the converge run it waited for locks the incarnation', async () => {
    // A soul whose sid is known before it exists: the incarnation's `fail` makes its gate fail, so
    // the converge run that brings it in fails and locks the incarnation.
    const sid = uniqueSid('stalled');
    const created = await api(k, 'POST', '/v1/incarnations', {
      name: 'wait-lock',
      service: 'slownote',
      covens: ['api'],
      input: { root, greeting: 'hi', fail: sid },
      allow_empty: true,
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.equal((await settled(k, 'wait-lock')).status, 'ready');

    holdRuns(root);
    await connectSoul(sid, 'api');
    const converge = await convergeRunning(k, 'wait-lock');

    const run = await api(k, 'POST', '/v1/incarnations/wait-lock/runs', { operation: 'create' });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    assert.equal(run.body.waits_for, converge.apply_id);
    releaseRuns(root);

    assert.equal((await settled(k, 'wait-lock', 120_000)).status, 'error_locked');
    const report = await waitFor(
      'the waiting run to end',
      async () => {
        const r = (await api(k, 'GET', `/v1/incarnations/wait-lock/runs/${run.body.apply_id}`)).body;
        return r.status !== 'running' ? r : undefined;
      },
      30_000,
      200,
    );
    assert.equal(report.status, 'failed');
    assert.match(report.error, new RegExp(`converge run ${converge.apply_id}.*error_locked; nothing was run`));
    assert.deepEqual(report.hosts, [], 'nothing was dispatched');
    const inc = (await api(k, 'GET', '/v1/incarnations/wait-lock')).body;
    assert.equal(inc.status, 'error_locked');
  });

  it('ends failed, running nothing, when the incarnation is removed with force while it waits', async () => {
    holdRuns(root);
    souls.push(...(await startSouls(k, path.join(root, 'souls-late'), [['web']])));
    const converge = await convergeRunning(k, 'wait-web');
    const run = await api(k, 'POST', '/v1/incarnations/wait-web/runs', { operation: 'create' });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    assert.equal(run.body.waits_for, converge.apply_id);
    assert.equal((await api(k, 'DELETE', '/v1/incarnations/wait-web?force=true')).status, 200);
    releaseRuns(root);
    const report = await waitFor(
      'the waiting run to end',
      async () => {
        const r = (await api(k, 'GET', `/v1/incarnations/wait-web/runs/${run.body.apply_id}`)).body;
        return r.status !== 'running' ? r : undefined;
      },
      30_000,
      200,
    );
    assert.equal(report.status, 'failed');
    assert.equal(report.error, 'the incarnation was removed while this run waited; nothing was run');
    assert.deepEqual(report.hosts, []);
  });
  it('an upgrade is accepted naming the converge run too, and migrates once that run ends', async () => {
    const created = await api(k, 'POST', '/v1/incarnations', {
      name: 'wait-up',
      service: 'slownote',
      covens: ['up'],
      input: { root, greeting: 'first' },
      allow_empty: true,
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.equal((await settled(k, 'wait-up')).status, 'ready');
    holdRuns(root);
    souls.push(...(await startSouls(k, path.join(root, 'souls-upgrade'), [['up']])));
    const converge = await convergeRunning(k, 'wait-up');
    const up = await api(k, 'POST', '/v1/incarnations/wait-up/upgrade', {});
    assert.equal(up.status, 202, JSON.stringify(up.body));
    assert.equal(up.body.waits_for, converge.apply_id, 'the answer names the converge run it waits for');
    releaseRuns(root);
    assert.equal(up.body.operation, 'upgrade');
    const report = await waitFor(
      'the waiting upgrade to end',
      async () => {
        const r = (await api(k, 'GET', `/v1/incarnations/wait-up/runs/${up.body.apply_id}`)).body;
        return r.status !== 'running' ? r : undefined;
      },
      120_000,
      200,
    );
    assert.equal(report.status, 'succeeded', JSON.stringify(report.error));
    assert.equal(report.waits_for, converge.apply_id);
    const convergeReport = (await api(k, 'GET', `/v1/incarnations/wait-up/runs/${converge.apply_id}`)).body;
    assert.equal(convergeReport.status, 'succeeded', 'the converge run finished, not cut short');
    const inc = await settled(k, 'wait-up');
    assert.equal(inc.status, 'ready');
    assert.equal(inc.apply_id, up.body.apply_id, 'the upgrade was the last run');
  });

  it('an upgrade ends failed, migrating nothing, when the converge run it waited for locks the incarnation', async () => {
    const sid = uniqueSid('stalled-up');
    const created = await api(k, 'POST', '/v1/incarnations', {
      name: 'wait-up-lock',
      service: 'slownote',
      covens: ['api-up'],
      input: { root, greeting: 'hi', fail: sid },
      allow_empty: true,
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.equal((await settled(k, 'wait-up-lock')).status, 'ready');
    // The version to upgrade to has two migrations (state_schema_version 1 -> 3).
    commitVersion3(path.join(root, 'slownote.git'));
    const published = await api(k, 'POST', '/v1/services/slownote/versions', { ref: 'v3' });
    assert.equal(published.status, 201, JSON.stringify(published.body));
    const before = (await api(k, 'GET', '/v1/incarnations/wait-up-lock')).body;

    holdRuns(root);
    await connectSoul(sid, 'api-up');
    const converge = await convergeRunning(k, 'wait-up-lock');
    const up = await api(k, 'POST', '/v1/incarnations/wait-up-lock/upgrade', { version: 'v3' });
    assert.equal(up.status, 202, JSON.stringify(up.body));
    assert.equal(up.body.waits_for, converge.apply_id);
    releaseRuns(root);

    assert.equal((await settled(k, 'wait-up-lock', 120_000)).status, 'error_locked');
    const report = await waitFor(
      'the waiting upgrade to end',
      async () => {
        const r = (await api(k, 'GET', `/v1/incarnations/wait-up-lock/runs/${up.body.apply_id}`)).body;
        return r.status !== 'running' ? r : undefined;
      },
      30_000,
      200,
    );
    assert.equal(report.status, 'failed');
    assert.match(report.error, new RegExp(`converge run ${converge.apply_id}.*error_locked; nothing was run`));
    const inc = (await api(k, 'GET', '/v1/incarnations/wait-up-lock')).body;
    assert.equal(inc.status, 'error_locked');
    assert.deepEqual(
      [inc.state_schema_version, inc.version, inc.state],
      [before.state_schema_version, before.version, before.state],
      'nothing was migrated: schema version, version and state as before',
    );
    assert.equal(inc.state_schema_version, 1);
    const hist = (await api(k, 'GET', '/v1/incarnations/wait-up-lock/history')).body.items;
    assert.ok(!hist.some((h: any) => h.operation === 'upgrade'), 'no upgrade in the history');
  });
});

describe('runs: a run waiting for a converge run survives a keeper killed with SIGKILL', function () {
  this.timeout(300_000);
  let k: Awaited<ReturnType<typeof initRunKeeper>>;
  let keeper: KeeperProcess | undefined;
  let root: string;
  const souls: TestSoul[] = [];

  before(async () => {
    root = tempDir('converge-wait-kill-');
    const src = path.join(root, 'slownote-src');
    writeSlowService(src);
    releaseRuns(root);
    const url = gitRepoFrom(src, path.join(root, 'slownote.git'), 'v1');
    k = await initRunKeeper();
    keeper = await spawnKeeper(k);
    souls.push(...(await startSouls(k, path.join(root, 'souls'), [['web']])));
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'slownote', git: url, ref: 'v1' })).status, 201);
  });
  after(() => stopRunRig({ souls, k, keeper, root }));

  it('the keeper killed while the run waits: started again, the converge run and then the waiting run end ready', async () => {
    const created = await api(k, 'POST', '/v1/incarnations', {
      name: 'wait-kill',
      service: 'slownote',
      covens: ['web'],
      input: { root, greeting: 'first' },
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.equal((await settled(k, 'wait-kill')).status, 'ready');
    holdRuns(root);
    souls.push(...(await startSouls(k, path.join(root, 'souls-new'), [['web']])));
    const converge = await convergeRunning(k, 'wait-kill');
    const run = await api(k, 'POST', '/v1/incarnations/wait-kill/runs', {
      operation: 'create',
      input: { greeting: 'after the kill' },
    });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    assert.equal(run.body.waits_for, converge.apply_id);

    const waiting = (await api(k, 'GET', `/v1/incarnations/wait-kill/runs/${run.body.apply_id}`)).body;
    assert.deepEqual([waiting.status, waiting.phase], ['running', 'queued'], 'still waiting when the keeper dies');
    keeper!.child.kill('SIGKILL');
    await keeper!.exited;
    keeper = await spawnKeeper(k);
    // The converge run was held at its gate through the kill; it goes on in the new keeper.
    releaseRuns(root);

    const report = await waitFor(
      'the waiting run to end',
      async () => {
        const r = (await api(k, 'GET', `/v1/incarnations/wait-kill/runs/${run.body.apply_id}`)).body;
        return r.status !== 'running' ? r : undefined;
      },
      180_000,
      500,
    );
    assert.equal(report.status, 'succeeded', JSON.stringify(report.error));
    assert.equal((await settled(k, 'wait-kill')).status, 'ready');
    const convergeReport = (await api(k, 'GET', `/v1/incarnations/wait-kill/runs/${converge.apply_id}`)).body;
    assert.equal(convergeReport.status, 'succeeded');
    assert.deepEqual(report.hosts.map((h: any) => h.sid).sort(), souls.map((s) => s.sid).sort());
    for (const s of souls)
      assert.equal(fs.readFileSync(path.join(root, s.sid, 'note0'), 'utf8'), 'after the kill\n', s.sid);
  });
});
