import assert from 'node:assert/strict';
import { createFakeRunner } from '../exec/testing';
import { createSystemd } from '../exec/systemd';
import { selectInitSystem } from '../exec/init-registry';
import { createServiceState } from './service';

// systemctl show's answer for a unit, as the fake runner gives it.
const show = (v: Record<string, string>) => ({
  stdout: Object.entries({
    LoadState: 'loaded',
    ActiveState: 'active',
    UnitFileState: 'enabled',
    NeedDaemonReload: 'no',
    MainPID: '42',
    ...v,
  })
    .map(([k, x]) => `${k}=${x}`)
    .join('\n'),
});

describe('core.service.* through the systemd driver (argv, no shell)', () => {
  it('running: starts and enables a stopped, disabled unit with systemctl argv, a dry run runs only systemctl show', async () => {
    const fake = createFakeRunner((cmd) =>
      cmd.args[0] === 'show' ? show({ ActiveState: 'inactive', UnitFileState: 'disabled', MainPID: '0' }) : {},
    );
    const mod = createServiceState('running', { facts: {}, runner: fake.run, init: createSystemd(fake.run) });
    const plan = await mod.run({ name: 'nginx', enabled: true }, { dryRun: true });
    assert.deepEqual(plan, {
      changed: true,
      ok: true,
      output: 'would start nginx, enable nginx at boot (dry run)',
      diff: { service: 'nginx', actions: ['start', 'enable'], before: { active: false, enabled: false } },
    });
    assert.deepEqual(fake.argv(), [
      ['systemctl', 'show', '--property=LoadState,ActiveState,UnitFileState,NeedDaemonReload,MainPID', '--', 'nginx'],
    ]);
    const done = await mod.run({ name: 'nginx', enabled: true }, { dryRun: false });
    assert.equal(done.output, 'started nginx, enabled nginx at boot');
    assert.deepEqual(fake.argv().slice(1), [
      fake.argv()[0],
      ['systemctl', 'start', '--', 'nginx'],
      ['systemctl', 'enable', '--', 'nginx'],
    ]);
  });

  it('re-reads unit files first when systemd says the file changed, or an earlier step of the apply wrote a unit file', async () => {
    const stale = createFakeRunner(show({ NeedDaemonReload: 'yes' }), {});
    const r1 = await createServiceState('restarted', {
      facts: {},
      runner: stale.run,
      init: createSystemd(stale.run),
    }).run({ name: 'app' }, { dryRun: false });
    assert.equal(r1.output, 'reloaded unit files (daemon-reload), restarted app');
    assert.deepEqual(stale.argv().slice(1), [
      ['systemctl', 'daemon-reload'],
      ['systemctl', 'restart', '--', 'app'],
    ]);
    // In a plan the earlier file step wrote nothing, so systemd knows no unit yet: the plan still says what the apply will do.
    const fresh = createFakeRunner(
      show({ LoadState: 'not-found', ActiveState: 'inactive', UnitFileState: '', MainPID: '0' }),
    );
    const earlier = [
      { index: 0, module: 'core.file.present', changed: true, paths: ['/etc/systemd/system/app.service'], names: [] },
    ];
    const plan = await createServiceState('running', {
      facts: {},
      runner: fresh.run,
      init: createSystemd(fresh.run),
    }).run({ name: 'app' }, { dryRun: true, earlier });
    assert.equal(plan.output, 'would reload unit files (daemon-reload), start app (dry run)');
    const elsewhere = [{ ...earlier[0]!, paths: ['/etc/app/app.conf'] }];
    const none = await createServiceState('running', {
      facts: {},
      runner: fresh.run,
      init: createSystemd(fresh.run),
    }).run({ name: 'app' }, { dryRun: true, earlier: elsewhere });
    assert.deepEqual(
      [none.ok, none.output],
      [false, 'core.service.running: reading current state failed: no unit named app on this host (systemd)'],
    );
  });

  it('daemon_reload: true re-reads unit files before reading the unit in a real run, not in a dry run', async () => {
    const fake = createFakeRunner(show({}));
    const mod = createServiceState('running', { facts: {}, runner: fake.run, init: createSystemd(fake.run) });
    const plan = await mod.run({ name: 'app', daemon_reload: true }, { dryRun: true });
    assert.deepEqual([plan.ok, plan.changed], [true, false]);
    assert.deepEqual(
      fake.argv().map((a) => a[1]),
      ['show'],
    );
    const r = await mod.run({ name: 'app', daemon_reload: true }, { dryRun: false });
    assert.deepEqual([r.ok, r.changed, r.output], [true, false, 'app is running, enabled at boot']);
    assert.deepEqual(
      fake
        .argv()
        .slice(1)
        .map((a) => a[1]),
      ['daemon-reload', 'show'],
    );
    const bad = await mod.run({ name: 'app', daemon_reload: 'yes' }, { dryRun: false });
    assert.equal(bad.ok, false);
    assert.match(bad.output, /daemon_reload/);
  });

  it('a unit file an earlier step removed is re-read too (it leaves systemd)', async () => {
    const fake = createFakeRunner(show({ ActiveState: 'inactive', MainPID: '0', UnitFileState: 'disabled' }), {});
    const earlier = [
      { index: 3, module: 'core.file.absent', changed: true, paths: ['/etc/systemd/system/app.service'], names: [] },
    ];
    const r = await createServiceState('stopped', { facts: {}, runner: fake.run, init: createSystemd(fake.run) }).run(
      { name: 'app' },
      { dryRun: false, earlier },
    );
    assert.deepEqual([r.ok, r.changed, r.output], [true, true, 'reloaded unit files (daemon-reload)']);
  });

  it('a unit name that reads as an option runs nothing; no init system is a clear error', async () => {
    const fake = createFakeRunner();
    const r = await createServiceState('stopped', { facts: {}, runner: fake.run, init: createSystemd(fake.run) }).run(
      { name: '--all' },
      { dryRun: false },
    );
    assert.deepEqual([r.ok, r.output], [false, 'core.service.stopped: invalid params: not a unit name: "--all"']);
    assert.deepEqual(fake.calls, []);
    assert.throws(
      () =>
        selectInitSystem(fake.run, [
          {
            tool: 'openrc',
            detectedBy: '/run/openrc exists',
            running: () => false,
            create: () => {
              throw new Error('no');
            },
          },
        ]),
      /no supported init system is running on this host; supported: openrc \(\/run\/openrc exists\)/,
    );
  });
});

describe('core.service.* and units that cannot be enabled', () => {
  it('a static unit asked to be enabled is no change (not a change every run)', async () => {
    const fake = createFakeRunner(show({ UnitFileState: 'static' }));
    const r = await createServiceState('running', { facts: {}, runner: fake.run, init: createSystemd(fake.run) }).run(
      { name: 'systemd-journald', enabled: true },
      { dryRun: false },
    );
    assert.deepEqual([r.ok, r.changed, r.output], [true, false, 'systemd-journald is running']);
  });
});
