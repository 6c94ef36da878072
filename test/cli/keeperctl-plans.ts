// keeperctl against a real keeper and soul: saved plans made, shown and applied exactly once.
// The rig and the order of the groups: keeperctl.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestSoul } from '../runs/keeper';
import type { KeeperctlRig } from './keeperctl-rig';

/** keeperctl: saved plans: made, shown, applied once. */
export function plansTests(rig: KeeperctlRig): void {
  const { ctl, ok, input } = rig;
  let root: string;
  let out: string;
  let souls: TestSoul[];
  // The rig's before() has filled rig.state by now: hooks run in the order they were registered.
  before(() => {
    ({ root, out, souls } = rig.state);
  });
  it('incarnations plan shows a plan and how to apply it; apply-plan asks, applies exactly it, and refuses it twice (exit 5); plans and runs list them', async () => {
    const motd = path.join(out, 'etc', 'motd');
    const before = fs.readFileSync(motd, 'utf8');
    const planned = await ctl([
      'incarnations',
      'plan',
      'motd-edge',
      'create',
      ...input(['--input', 'message=reviewed plan']),
    ]);
    ok(planned);
    const planId = /^plan (\S+) of motd-edge \(create\): ready$/m.exec(planned.stdout)?.[1];
    assert.ok(planId, planned.stdout);
    assert.match(planned.stdout, /^ {6}\+.*reviewed plan.*$/m);
    assert.match(
      planned.stdout,
      new RegExp(
        `^apply exactly this plan with: keeperctl incarnations apply-plan motd-edge ${planId.replace(/\./g, '\\.')}$`,
        'm',
      ),
    );
    assert.equal(fs.readFileSync(motd, 'utf8'), before, 'a plan applies nothing');

    const asJson = await ctl([
      'incarnations',
      'plan',
      'motd-edge',
      'create',
      '-o',
      'json',
      ...input(['--input', 'message=reviewed plan']),
    ]);
    ok(asJson);
    const other = JSON.parse(asJson.stdout);
    assert.deepEqual([other.incarnation, other.operation, other.status], ['motd-edge', 'create', 'ready']);
    assert.ok(other.summary.would_change >= 1, JSON.stringify(other.summary));
    assert.equal(other.hosts[0].sid, souls[0]!.sid);
    assert.ok(
      other.hosts[0].steps.some((st: any) => st.would_change && typeof st.diff?.content?.unified === 'string'),
      JSON.stringify(other.hosts[0].steps),
    );

    const unasked = await ctl(['incarnations', 'apply-plan', 'motd-edge', planId]);
    assert.equal(unasked.code, 2, unasked.stderr);
    assert.match(
      unasked.stderr,
      /apply exactly plan .* to motd-edge\? \(not asked: standard input is not a terminal\)/,
    );
    assert.equal(fs.readFileSync(motd, 'utf8'), before, 'nothing applied without --yes');

    const applied = await ctl(['incarnations', 'apply-plan', 'motd-edge', planId, '--yes', '-o', 'json']);
    ok(applied);
    const report = JSON.parse(applied.stdout);
    assert.deepEqual([report.status, report.plan_id, report.operation], ['succeeded', planId, 'create']);
    assert.match(fs.readFileSync(motd, 'utf8'), /reviewed plan/);

    const twice = await ctl(['incarnations', 'apply-plan', 'motd-edge', planId, '--yes']);
    assert.equal(twice.code, 5, twice.stderr);
    assert.match(
      twice.stderr,
      new RegExp(`plan ${planId.replace(/\./g, '\\.')} is applied; only a ready plan can be applied`),
    );
    // The other plan was made before this apply committed: the keeper itself refuses it as stale (409).
    const stale = await ctl(['incarnations', 'apply-plan', 'motd-edge', other.plan_id, '--yes']);
    assert.equal(stale.code, 5, stale.stderr);
    assert.match(stale.stderr, /Conflict: /);
    assert.match(stale.stderr, /make a new plan: keeperctl incarnations plan motd-edge <operation>/);
    assert.doesNotMatch(stale.stderr, /--force/);

    const plans = JSON.parse((await ctl(['incarnations', 'plans', 'motd-edge', '-o', 'json', '--all'])).stdout);
    assert.deepEqual(
      plans.items.slice(0, 2).map((x: any) => [x.plan_id, x.status]),
      [
        [other.plan_id, 'ready'],
        [planId, 'applied'],
      ],
    );
    assert.equal(plans.items[1].applied_by, report.apply_id);
    assert.match(
      (await ctl(['incarnations', 'plans', 'motd-edge'])).stdout.split('\n')[0]!,
      /^PLAN ID\s+OPERATION\s+STATUS\s+WOULD CHANGE\s+CREATED\s+EXPIRES\s+APPLIED BY$/,
    );

    const runs = JSON.parse(
      (await ctl(['incarnations', 'runs', 'motd-edge', '--all', '--limit', '2', '-o', 'json'])).stdout,
    );
    const history = JSON.parse((await ctl(['incarnations', 'history', 'motd-edge', '--all', '-o', 'json'])).stdout);
    assert.equal(runs.next_cursor, null, '--all followed the cursors');
    assert.equal(runs.items[0].apply_id, report.apply_id, 'newest first');
    assert.ok(runs.items.length > 2, 'more than one page of 2');
    assert.ok(
      history.items.every((h: any) => runs.items.some((r: any) => r.apply_id === h.apply_id)),
      'every committed run is listed',
    );
    assert.ok(
      runs.items.every((r: any) => !/\.plan\./.test(r.apply_id)),
      'plans are not runs',
    );
    const runsTable = (await ctl(['incarnations', 'runs', 'motd-edge'])).stdout;
    assert.match(runsTable.split('\n')[0]!, /^APPLY ID\s+OPERATION\s+STATUS\s+VERSION\s+HOSTS\s+STARTED\s+FINISHED$/);
    assert.match(
      runsTable,
      new RegExp(`^${report.apply_id.replace(/\./g, '\\.')}\\s+create\\s+succeeded\\s+v4\\s+1: changed 1\\s`, 'm'),
    );

    const noSuch = await ctl(['incarnations', 'plan', 'nothing-here', 'create']);
    assert.equal(noSuch.code, 4, noSuch.stderr);
    assert.match(noSuch.stderr, /Not Found: /);
  });

  it('incarnations plan --service --coven plans the create of an incarnation that does not exist; apply-plan creates it with exactly that plan', async () => {
    const planRoot = path.join(root, 'planned');
    const args = ['--input', `root=${planRoot}`, '--input', 'message=planned create', '--input', 'package=git'];
    const half = await ctl(['incarnations', 'plan', 'motd-planned', 'create', '--service', 'motd', ...args]);
    assert.equal(half.code, 2, half.stderr);
    assert.match(half.stderr, /--service and --coven go together/);

    const planned = await ctl([
      'incarnations',
      'plan',
      'motd-planned',
      'create',
      '--service',
      'motd',
      '--coven',
      'edge',
      ...args,
    ]);
    ok(planned);
    const planId = /^plan (\S+) of motd-planned \(create\): ready$/m.exec(planned.stdout)?.[1];
    assert.ok(planId, planned.stdout);
    assert.match(planned.stdout, /^ {6}\+.*planned create.*$/m);
    assert.match(planned.stdout, /^apply exactly this plan with: keeperctl incarnations apply-plan motd-planned \S+$/m);
    assert.equal(fs.existsSync(path.join(planRoot, 'etc', 'motd')), false, 'a plan writes nothing');
    const missing = await ctl(['incarnations', 'get', 'motd-planned']);
    assert.equal(missing.code, 4, 'the plan of a create creates no incarnation');

    const applied = await ctl(['incarnations', 'apply-plan', 'motd-planned', planId, '--yes', '-o', 'json']);
    ok(applied);
    const report = JSON.parse(applied.stdout);
    assert.deepEqual([report.status, report.plan_id, report.operation], ['succeeded', planId, 'create']);
    assert.match(fs.readFileSync(path.join(planRoot, 'etc', 'motd'), 'utf8'), /planned create/);
    const inc = JSON.parse((await ctl(['incarnations', 'get', 'motd-planned', '-o', 'json'])).stdout);
    assert.deepEqual([inc.status, inc.service, inc.covens], ['ready', 'motd', ['edge']]);

    // An existing incarnation keeps its service and covens: the keeper's 400 names the field (exit 2).
    const again = await ctl([
      'incarnations',
      'plan',
      'motd-planned',
      'update',
      '--service',
      'motd',
      '--coven',
      'edge',
      ...args,
    ]);
    assert.equal(again.code, 2, again.stderr);
    assert.match(again.stderr, /service/);
    // An unknown version of the service is refused before any host is checked, naming it.
    const unknown = await ctl([
      'incarnations',
      'plan',
      'motd-other',
      'create',
      '--service',
      'motd',
      '--coven',
      'edge',
      '--version',
      'v99',
      ...args,
    ]);
    assert.notEqual(unknown.code, 0, unknown.stderr);
    assert.match(unknown.stderr, /v99/);
    await ctl(['incarnations', 'delete', 'motd-planned', '--force', '--yes']);
  });
}
