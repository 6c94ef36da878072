// A plan applied (POST .../runs {plan_id}) while the converger's run of the same incarnation is in
// flight (issue 30), on the real stack with real souls: it is accepted waiting for that run (202,
// `waits_for`, keeperctl says so), and once its turn comes it is checked again against what that run
// did (db/repos/plan-recheck.ts). The converge run only brought in hosts the plan does not cover: the
// plan applies exactly, and those hosts follow with the plan's input in a converge run of their own.
// The converge run changed hosts the plan covers: the run ends refused as a stale plan, naming them,
// nothing applied, the incarnation `ready`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { runKeeperctl } from '../support/keeperctl-process';
import { waitFor } from '../agents/harness';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, stopRunRig, tempDir, type TestSoul } from './keeper';
import { convergeRunning, holdRuns, releaseRuns, runsOf, writeSlowService } from './slow-service';

describe('runs: a plan applied during a converge run waits for it, then applies only if still exact', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  const souls: TestSoul[] = [];
  const note = (s: TestSoul) => fs.readFileSync(path.join(root, s.sid, 'note0'), 'utf8');
  const plan = async (name: string, greeting: string) => {
    const r = await api(k, 'POST', `/v1/incarnations/${name}/plans`, { operation: 'create', input: { greeting } });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const got = await api(k, 'GET', `${r.body.plan}?wait=60s`);
    assert.equal(got.body.status, 'ready', JSON.stringify(got.body.error));
    return got.body;
  };
  const ended = (name: string, applyId: string) =>
    waitFor(
      `run ${applyId} to end`,
      async () => {
        const r = (await api(k, 'GET', `/v1/incarnations/${name}/runs/${applyId}`)).body;
        return r.status !== 'running' ? r : undefined;
      },
      120_000,
      200,
    );
  const create = async (name: string, coven: string) => {
    const created = await api(k, 'POST', '/v1/incarnations', {
      name,
      service: 'slownote',
      covens: [coven],
      input: { root, greeting: 'first' },
      allow_empty: true,
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const inc = await settled(k, name, 120_000);
    assert.equal(inc.status, 'ready', JSON.stringify((await runsOf(k, name))[0]?.error));
  };

  before(async () => {
    root = tempDir('converge-wait-plan-');
    const src = path.join(root, 'slownote-src');
    // The converge runs wait at the service's gate until the plan's run has been accepted.
    writeSlowService(src);
    releaseRuns(root);
    const url = gitRepoFrom(src, path.join(root, 'slownote.git'), 'v1');
    k = await startRunKeeper();
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'slownote', git: url, ref: 'v1' })).status, 201);
  });
  after(() => stopRunRig({ souls, k, root }));

  it('the converge run brought in only new hosts: the plan applies exactly, and the new hosts follow with its input', async () => {
    const old = await startSouls(k, path.join(root, 'souls-a'), [['pa'], ['pa']]);
    souls.push(...old);
    await create('plan-wait', 'pa');
    const p = await plan('plan-wait', 'second');
    assert.deepEqual(p.hosts.map((h: any) => h.sid).sort(), old.map((s) => s.sid).sort());

    holdRuns(root);
    const fresh = await startSouls(k, path.join(root, 'souls-a-new'), [['pa'], ['pa']]);
    souls.push(...fresh);
    const converge = await convergeRunning(k, 'plan-wait');
    // keeperctl applies it as an operator would, says that it waits, and follows it to its end.
    const applying = runKeeperctl(['incarnations', 'apply-plan', 'plan-wait', p.plan_id, '--yes'], {
      PATH: process.env['PATH'],
      HOME: root,
      KEEPER_URL: k.baseUrl,
      KEEPER_TOKEN: k.adminToken,
    });
    // Once the plan's run is accepted waiting, the converge run may go on.
    await waitFor(
      "the plan's run to wait",
      async () => (await runsOf(k, 'plan-wait')).some((r) => r.waits_for === converge.apply_id) || undefined,
      60_000,
      100,
    );
    releaseRuns(root);
    const ctl = await applying;
    assert.equal(ctl.code, 0, ctl.stderr);
    const said = new RegExp(`run (\\S+) waits for converge run ${converge.apply_id} \\(new hosts of plan-wait\\)`).exec(
      ctl.stderr + ctl.stdout,
    );
    assert.ok(said, `keeperctl says the run waits: ${ctl.stderr}`);
    const report = await ended('plan-wait', said[1]!);
    assert.equal(report.status, 'succeeded', JSON.stringify(report.error));
    assert.deepEqual([report.plan_id, report.waits_for], [p.plan_id, converge.apply_id]);
    assert.equal((await ended('plan-wait', converge.apply_id)).status, 'succeeded');
    assert.deepEqual(
      report.hosts.map((h: any) => h.sid).sort(),
      old.map((s) => s.sid).sort(),
      'exactly the hosts of the plan, as it was checked',
    );
    for (const s of old) assert.equal(note(s), 'second\n', `${s.sid} has the plan's note`);

    // The new hosts got the state before the plan from the converge run; the converger brings them
    // to the plan's input in a run of their own, without an operator.
    await waitFor(
      'the new hosts to follow the plan',
      async () => fresh.every((s) => note(s) === 'second\n') || undefined,
      120_000,
      500,
    );
    const inc = await settled(k, 'plan-wait', 120_000);
    assert.equal(inc.status, 'ready');
    assert.equal(inc.state.greeting, 'second');
    const follow = (await runsOf(k, 'plan-wait')).find((r) => r.created_at > report.created_at);
    assert.ok(follow, 'a converge run after the plan');
    assert.deepEqual([...follow.target_sids].sort(), fresh.map((s) => s.sid).sort());
  });

  it('the converge run changed hosts the plan covers: refused as a stale plan naming them, nothing applied', async () => {
    const old = await startSouls(k, path.join(root, 'souls-b'), [['pb']]);
    souls.push(...old);
    await create('plan-stale', 'pb');
    holdRuns(root);
    const fresh = await startSouls(k, path.join(root, 'souls-b-new'), [['pb']]);
    souls.push(...fresh);
    const converge = await convergeRunning(k, 'plan-stale');
    // Made while the converge run is in flight: the plan covers the new host too, before that run reached it.
    const p = await plan('plan-stale', 'third');
    assert.deepEqual(p.hosts.map((h: any) => h.sid).sort(), [...old, ...fresh].map((s) => s.sid).sort());
    const run = await api(k, 'POST', '/v1/incarnations/plan-stale/runs', { plan_id: p.plan_id });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    assert.equal(run.body.waits_for, converge.apply_id);
    releaseRuns(root);

    const report = await ended('plan-stale', run.body.apply_id);
    assert.equal(report.status, 'failed');
    assert.equal(
      report.error,
      `plan ${p.plan_id} is stale: it was made on the state of run ${p.based_on}, and run ${converge.apply_id} has committed since ` +
        `(it applied to host(s) the plan had checked: ${fresh[0]!.sid}); make a new plan with POST /v1/incarnations/plan-stale/plans; nothing was applied`,
    );
    assert.deepEqual(report.hosts, [], 'nothing was dispatched');
    const inc = await settled(k, 'plan-stale');
    assert.deepEqual([inc.status, inc.apply_id, inc.state.greeting], ['ready', converge.apply_id, 'first']);
    for (const s of [...old, ...fresh]) assert.equal(note(s), 'first\n', `${s.sid} keeps the note before the plan`);
    // Not locked: a fresh plan applies at once.
    const again = await plan('plan-stale', 'third');
    const applied = await api(k, 'POST', '/v1/incarnations/plan-stale/runs', { plan_id: again.plan_id });
    assert.equal(applied.status, 202, JSON.stringify(applied.body));
    assert.equal(applied.body.waits_for, undefined);
    assert.equal((await ended('plan-stale', applied.body.apply_id)).status, 'succeeded');
    for (const s of [...old, ...fresh]) assert.equal(note(s), 'third\n', s.sid);
  });
});
