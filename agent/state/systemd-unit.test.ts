import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSystemd } from '../exec/systemd';
import { createFakeRunner } from '../exec/testing';
import { createSystemdUnitState } from './systemd-unit';

// systemctl answered by a fake runner (exact argv), the unit directory a temp folder: the order of the
// actions, a dry run that runs only `systemctl show`, and refusals that run nothing.
describe('core.systemd.unit (fake systemctl, temp unit folder)', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'unit-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const notFound = {
    stdout: 'LoadState=not-found\nActiveState=inactive\nUnitFileState=\nNeedDaemonReload=no\nMainPID=0\n',
  };
  const timer = '[Timer]\nOnCalendar=daily\n[Install]\nWantedBy=timers.target\n';
  const params = { name: 'tick.timer', content: timer, enabled: true, state: 'started' };

  it('a new timer: a dry run reads only; the apply writes, reloads, enables, starts, in that order', async () => {
    const fake = createFakeRunner((c) => (c.args[0] === 'show' ? notFound : {}));
    const mod = createSystemdUnitState({ facts: {}, runner: fake.run, init: createSystemd(fake.run) }, dir);
    const plan = await mod.run(params, { dryRun: true });
    assert.equal(
      plan.output,
      `would create ${dir}/tick.timer, reload unit files (daemon-reload), enable tick.timer at boot, start tick.timer (dry run)`,
    );
    assert.deepEqual(fake.argv(), [
      [
        'systemctl',
        'show',
        '--property=LoadState,ActiveState,UnitFileState,NeedDaemonReload,MainPID',
        '--',
        'tick.timer',
      ],
    ]);
    assert.equal(fs.existsSync(path.join(dir, 'tick.timer')), false);
    const done = await mod.run(params, { dryRun: false });
    assert.equal(done.ok, true, done.output);
    assert.deepEqual(fake.argv().slice(2), [
      ['systemctl', 'daemon-reload'],
      ['systemctl', 'enable', '--', 'tick.timer'],
      ['systemctl', 'start', '--', 'tick.timer'],
    ]);
    assert.equal(fs.readFileSync(path.join(dir, 'tick.timer'), 'utf8'), timer);
  });

  it('a failing action says what was already done', async () => {
    const fake = createFakeRunner((c) =>
      c.args[0] === 'show' ? notFound : c.args[0] === 'start' ? { code: 1, stderr: 'Job failed' } : {},
    );
    const r = await createSystemdUnitState({ facts: {}, runner: fake.run, init: createSystemd(fake.run) }, dir).run(
      params,
      {
        dryRun: false,
      },
    );
    assert.deepEqual([r.ok, r.changed], [false, false]);
    assert.match(
      r.output,
      /systemctl start -- tick.timer failed \(exit 1\): Job failed \(already done: created .*tick.timer, reloaded unit files \(daemon-reload\), enabled tick.timer at boot\)/,
    );
  });

  it('refuses a name that is a path or an option, and enabled without [Install], running nothing', async () => {
    const fake = createFakeRunner({});
    const mod = createSystemdUnitState({ facts: {}, runner: fake.run, init: createSystemd(fake.run) }, dir);
    for (const [p, re] of [
      [{ name: '../../etc/passwd.service', content: 'x' }, /param "name" must be a unit file name/],
      [{ name: '-x.service', content: 'x' }, /param "name"/],
      [
        { name: 'a.timer', content: '[Timer]\nOnBootSec=1\n', enabled: true },
        /param "enabled": a.timer has no \[Install\] section/,
      ],
      [{ name: 'a.service', state: 'restarted' }, /param "state" must be "started" or "stopped"/],
      [{ name: 'a.service', contents: 'x' }, /unknown param "contents"/],
    ] as const) {
      const r = await mod.run(p, { dryRun: false });
      assert.equal(r.ok, false);
      assert.match(r.output, re);
    }
    assert.deepEqual(fake.calls, []);
  });
});
