// Plan, then apply exactly the plan (issue 17, items 2 and 3; docs/plans.md), on the real stack with
// real souls: a plan shows the exact diffs of two files and one package and applies nothing (files
// and the souls' ledgers untouched, the incarnation still `ready`); applying it changes exactly that;
// a file edited on one host between plan and apply refuses that host with the drift and commits
// nothing; a fresh plan then applies. A plan is applied once, only while it is fresh.
// An upgrade's plan shows the migrations and migrates nothing. The plan of a create: plans-create.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { api, settled, type TestSoul } from './keeper';
import { candidate, installedVersion, PACKAGE, plansRig } from './plans-rig';

describe('plans: plan, then apply exactly the plan', function () {
  this.timeout(300_000);
  const { state, file, read, ledger, plan, host, ctl } = plansRig();
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[] = [];
  before(() => {
    ({ k, root, souls } = state);
  });

  it('a plan shows the exact diffs of two files and one package, and applies nothing', async () => {
    const [a, b] = souls as [TestSoul, TestSoul];
    const before = {
      conf: read(a, 'app.conf'),
      motd: read(a, 'motd'),
      ledgers: [ledger(a), ledger(b)],
      inc: (await api(k, 'GET', '/v1/incarnations/shop')).body,
    };
    const p = await plan({ operation: 'update', input: { root, port: 8080, greeting: 'welcome' } });
    assert.equal(p.status, 'ready', JSON.stringify(p));
    assert.equal(p.based_on, before.inc.apply_id);
    assert.ok(Date.parse(p.expires_at) > Date.now());

    const ha = host(p, a);
    assert.equal(ha.status, 'changed');
    assert.deepEqual([ha.facts.fqdn, ha.facts.covens], [a.sid, ['web', 'pkg']], 'the facts the plan depended on');
    const [conf, motd, pkg] = ha.steps;
    assert.deepEqual(
      [conf.status, conf.would_change, motd.would_change, pkg.would_change],
      ['changed', true, true, true],
    );
    assert.equal(
      conf.diff.content.unified,
      [
        `--- a${file(a, 'app.conf')}`,
        `+++ b${file(a, 'app.conf')}`,
        '@@ -1,4 +1,4 @@',
        ' # managed by keeper',
        ' name=app',
        '-port=80',
        '+port=8080',
        ' workers=4',
        '',
      ].join('\n'),
    );
    assert.equal(
      motd.diff.content.unified,
      [`--- a${file(a, 'motd')}`, `+++ b${file(a, 'motd')}`, '@@ -1,1 +1,1 @@', '-hello', '+welcome', ''].join('\n'),
    );
    assert.deepEqual(pkg.diff, { package: PACKAGE, from: null, to: candidate() });
    assert.match(pkg.output, /^would install hello with apt \(dry run\)$/);
    // The host outside coven pkg gets the files only: the package step is left out there by `on:`.
    const hb = host(p, b);
    assert.deepEqual(
      hb.steps.map((s: any) => [s.status, s.skip_reason]),
      [
        ['changed', null],
        ['changed', null],
        ['skipped', 'on'],
      ],
    );
    assert.equal(p.summary.would_change, 5);

    // Nothing applied: files, package, ledgers, the incarnation and its runs as they were.
    assert.equal(read(a, 'app.conf'), before.conf);
    assert.equal(read(a, 'motd'), before.motd);
    assert.equal(installedVersion(), null);
    assert.deepEqual([ledger(a), ledger(b)], before.ledgers);
    const inc = (await api(k, 'GET', '/v1/incarnations/shop')).body;
    assert.deepEqual([inc.status, inc.apply_id, inc.state], ['ready', before.inc.apply_id, before.inc.state]);
    assert.equal((await api(k, 'GET', '/v1/incarnations/shop/runs')).body.items.length, 1, 'a plan is not a run');
    const listed = (await api(k, 'GET', '/v1/incarnations/shop/plans')).body.items;
    assert.deepEqual(
      listed.map((x: any) => [x.plan_id, x.status]),
      [[p.plan_id, 'ready']],
    );

    // Applying it changes exactly that.
    const run = await api(k, 'POST', '/v1/incarnations/shop/runs', { plan_id: p.plan_id });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    assert.equal((await settled(k, 'shop')).status, 'ready');
    const report = (await api(k, 'GET', run.body.run)).body;
    assert.deepEqual([report.status, report.plan_id, report.operation], ['succeeded', p.plan_id, 'update']);
    assert.equal(read(a, 'app.conf'), '# managed by keeper\nname=app\nport=8080\nworkers=4\n');
    assert.equal(read(b, 'motd'), 'welcome\n');
    assert.equal(installedVersion(), candidate());
    const ra = report.hosts.find((h: any) => h.sid === a.sid);
    assert.deepEqual(
      ra.steps.map((s: any) => s.status),
      ['changed', 'changed', 'changed'],
    );
    assert.equal((await api(k, 'GET', '/v1/incarnations/shop')).body.state.port, 8080);

    // Once only.
    const twice = await api(k, 'POST', '/v1/incarnations/shop/runs', { plan_id: p.plan_id });
    assert.equal(twice.status, 409);
    assert.match(twice.body.detail, /was applied already by run /);
    assert.equal((await api(k, 'GET', `/v1/incarnations/shop/plans/${p.plan_id}`)).body.status, 'applied');
  });

  it('a file edited on one host between plan and apply refuses that host with the drift and commits nothing; a fresh plan applies', async () => {
    const [a, b] = souls as [TestSoul, TestSoul];
    const p = await plan({ operation: 'update', input: { root, port: 9090, greeting: 'welcome' } });
    assert.equal(p.status, 'ready');
    assert.equal(p.summary.would_change, 2, 'app.conf on both hosts; the package is there now');
    fs.writeFileSync(file(b, 'app.conf'), 'edited by hand\n');
    const state = (await api(k, 'GET', '/v1/incarnations/shop')).body.state;

    const run = await api(k, 'POST', '/v1/incarnations/shop/runs', { plan_id: p.plan_id });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    const inc = await settled(k, 'shop');
    assert.equal(inc.status, 'error_locked');
    assert.deepEqual(inc.state, state, 'nothing committed');
    const report = (await api(k, 'GET', run.body.run)).body;
    const rb = report.hosts.find((h: any) => h.sid === b.sid);
    assert.equal(rb.status, 'failed');
    assert.match(
      rb.reason,
      new RegExp(
        `^drift since plan ${p.plan_id.replace(/\./g, '\\.')}: step 0 \\(app config\\): content\\.before\\.digest: the plan saw [0-9a-f]{12}…, now [0-9a-f]{12}…(, [^;]*)?; nothing was applied on this host$`,
      ),
    );
    assert.doesNotMatch(rb.reason, /[{}]|edited by hand/, 'readable words, no JSON and no file content');
    assert.deepEqual(
      rb.steps.map((s: any) => [s.status, s.skip_reason]),
      [
        ['skipped', 'drift'],
        ['skipped', 'drift'],
        ['skipped', 'drift'],
      ],
    );
    assert.equal(read(b, 'app.conf'), 'edited by hand\n', 'the drifted host was not touched');
    assert.match(report.error, /1 host\(s\) failed/);

    // Unlock, plan again (it sees the edit), apply: both hosts as planned.
    assert.equal((await api(k, 'POST', '/v1/incarnations/shop/unlock')).status, 200);
    const fresh = await plan({ operation: 'update', input: { root, port: 9090, greeting: 'welcome' } });
    assert.equal(fresh.status, 'ready');
    const bconf = host(fresh, b).steps[0];
    assert.match(bconf.diff.content.unified, /\n-edited by hand\n\+# managed by keeper\n/);
    const again = await api(k, 'POST', '/v1/incarnations/shop/runs', { plan_id: fresh.plan_id });
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.equal((await settled(k, 'shop')).status, 'ready');
    assert.equal(read(b, 'app.conf'), '# managed by keeper\nname=app\nport=9090\nworkers=4\n');
    assert.equal(read(a, 'app.conf'), '# managed by keeper\nname=app\nport=9090\nworkers=4\n');
  });

  it('a plan made before another run committed is stale; bad requests change nothing', async () => {
    // A soul registered in the covens but never onboarded is reported, not targeted: the plan is still ready.
    assert.equal(
      (
        await api(k, 'POST', '/v1/souls', {
          sid: 'never-onboarded.plans.keeper.test',
          transport: 'agent',
          covens: ['web'],
        })
      ).status,
      201,
    );
    const p = await plan({ operation: 'update', input: { root, port: 7070 } });
    assert.equal(p.status, 'ready', JSON.stringify(p));
    assert.deepEqual(
      p.hosts.filter((h: any) => h.status === 'pending').map((h: any) => h.sid),
      ['never-onboarded.plans.keeper.test'],
    );
    const other = await api(k, 'POST', '/v1/incarnations/shop/runs', {
      operation: 'update',
      input: { root, port: 9090, greeting: 'welcome' },
    });
    assert.equal(other.status, 202);
    assert.equal((await settled(k, 'shop')).status, 'ready');
    const stale = await api(k, 'POST', '/v1/incarnations/shop/runs', { plan_id: p.plan_id });
    assert.equal(stale.status, 409);
    assert.match(
      stale.body.detail,
      /is stale: it was made on the state of run .*, and run .* has committed since; make a new plan/,
    );

    const both = await api(k, 'POST', '/v1/incarnations/shop/runs', { plan_id: p.plan_id, operation: 'update' });
    assert.equal(both.status, 400);
    assert.deepEqual(both.body.errors, [{ path: '/body/operation', message: 'not allowed with plan_id' }]);
    assert.equal((await api(k, 'POST', '/v1/incarnations/shop/runs', {})).status, 400);
    assert.equal((await api(k, 'POST', '/v1/incarnations/shop/runs', { plan_id: 'shop.update.nope' })).status, 404);
    const unknownOp = await api(k, 'POST', '/v1/incarnations/shop/plans', { operation: 'nope' });
    assert.equal(unknownOp.status, 400);
    assert.equal(
      (await api(k, 'GET', '/v1/incarnations/shop/plans')).body.items.length,
      4,
      'no plan recorded for the refused request',
    );
  });

  it('the plan of an upgrade shows the migrations with the state before and after, and the file diffs of the new version', async () => {
    const [a] = souls as [TestSoul];
    const repo = path.join(root, 'plan.git');
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@keeper.test', ...args], {
        cwd: repo,
        stdio: 'pipe',
      });
    for (const op of ['create', 'update']) {
      const f = path.join(repo, 'scenario', op, 'main.yml');
      fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace('workers=4', 'workers=8'));
    }
    const yml = path.join(repo, 'service.yml');
    fs.writeFileSync(yml, fs.readFileSync(yml, 'utf8').replace('state_schema_version: 1', 'state_schema_version: 2'));
    fs.mkdirSync(path.join(repo, 'migrations'));
    fs.writeFileSync(
      path.join(repo, 'migrations', '2.yml'),
      'description: Version 2 records the listen address.\nstate_changes:\n  sets:\n    listen: "0.0.0.0:${state.port}"\n',
    );
    git('add', '-A');
    git('commit', '-q', '-m', 'v2: 8 workers, schema 2');
    git('tag', 'v2');
    assert.equal((await api(k, 'POST', '/v1/services/plan/versions', { ref: 'v2' })).status, 201);
    const before = (await api(k, 'GET', '/v1/incarnations/shop')).body;
    assert.equal(
      (await api(k, 'POST', '/v1/incarnations/shop/plans', { operation: 'upgrade' })).body.errors[0].path,
      '/body/version',
    );

    const accepted = await api(k, 'POST', '/v1/incarnations/shop/plans', { operation: 'upgrade', version: 'v2' });
    assert.equal(accepted.body.operation, 'upgrade', JSON.stringify(accepted.body));
    const p = await plan({ operation: 'upgrade', version: 'v2' });
    assert.equal(p.status, 'ready', JSON.stringify(p));
    assert.equal(p.operation, 'upgrade', 'labelled as what was planned');
    assert.deepEqual(p.upgrade, {
      version: 'v2',
      from_version: 1,
      to_version: 2,
      migrations: [2],
      state_before: before.state,
      state_after: { ...before.state, listen: `0.0.0.0:${before.state.port}` },
      operation: 'update',
      next:
        'upgrade the state with POST /v1/incarnations/shop/upgrade {"version": "v2"}, then apply the files of v2 ' +
        'with a run of update (POST /v1/incarnations/shop/runs {"operation": "update"}): an upgrade changes no host',
    });
    const listed = (await api(k, 'GET', '/v1/incarnations/shop/plans')).body.items.find(
      (x: any) => x.plan_id === p.plan_id,
    );
    assert.equal(listed.operation, 'upgrade');

    // keeperctl: plan-report shows the upgrade, the migration, the state it changes and what to run next.
    const report = await ctl(['incarnations', 'plan-report', 'shop', p.plan_id]);
    assert.equal(report.code, 0, report.stderr);
    assert.match(
      report.stdout,
      new RegExp(`^plan ${p.plan_id.replace(/\./g, '\\.')} of shop \\(upgrade\\): ready$`, 'm'),
    );
    assert.match(
      report.stdout,
      /^upgrade to v2: state_schema_version 1 -> 2, migrations 2; the hosts show what update at v2 would change$/m,
    );
    assert.match(
      report.stdout,
      new RegExp(`^  state listen: \\(none\\) -> "0\\.0\\.0\\.0:${before.state.port}"$`, 'm'),
    );
    assert.match(report.stdout, /upgrade the state with: keeperctl incarnations upgrade shop --version v2\n/);
    assert.match(report.stdout, /then apply the files of v2 with: keeperctl run shop update\n/);
    assert.doesNotMatch(report.stdout, /apply-plan/);
    const made = await ctl(['incarnations', 'plan', 'shop', 'upgrade', '--version', 'v2']);
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /\(upgrade\): ready\n[^]*keeperctl incarnations upgrade shop --version v2\n/);
    const applied = await ctl(['incarnations', 'apply-plan', 'shop', p.plan_id, '--yes']);
    assert.equal(applied.code, 5, applied.stderr);
    assert.match(applied.stderr, /keeperctl incarnations upgrade shop --version v2, then keeperctl run shop update/);
    assert.match(host(p, a).steps[0].diff.content.unified, /\n-workers=4\n\+workers=8\n$/);
    const now = (await api(k, 'GET', '/v1/incarnations/shop')).body;
    assert.deepEqual(
      [now.state_schema_version, now.version, now.state],
      [1, before.version, before.state],
      'a plan migrates nothing',
    );

    const apply = await api(k, 'POST', '/v1/incarnations/shop/runs', { plan_id: p.plan_id });
    assert.equal(apply.status, 409);
    assert.match(apply.body.detail, /upgrade with POST \/v1\/incarnations\/shop\/upgrade \{"version": "v2"\}/);
  });
});
