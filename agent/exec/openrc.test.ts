import assert from 'node:assert/strict';
import { createServiceState } from '../state/service';
import type { Command } from './runner';
import { createOpenrc, openrcPlatform, parseOpenrcStatus, parseRcUpdateShow } from './openrc';
import { INIT_PLATFORMS, selectInitSystem } from './init-registry';
import { createFakeRunner } from './testing';

// `rc-update show default` as Alpine prints it.
const RUNLEVEL = '             crond | default\n             nginx | default\n              sshd | default\n';
const STOPPED = { code: 3, stdout: ' * status: stopped\n' };
const STARTED = { code: 0, stdout: ' * status: started\n' };

/** An Alpine host as rc-service and rc-update answer: `state` of each known init script. */
function host(state: Record<string, 'started' | 'stopped' | 'crashed'>, enabled: string[]) {
  return (cmd: Command) => {
    const [a, b, c] = cmd.args;
    if (cmd.file === 'rc-update' && a === 'show') return { stdout: enabled.map((n) => `  ${n} | default\n`).join('') };
    if (cmd.file === 'rc-service' && a === '--exists') return { code: c! in state ? 0 : 1 };
    if (cmd.file === 'rc-service' && a === '--' && c === 'status') {
      const s = state[b!];
      if (s === undefined) return { code: 1, stderr: ` * rc-service: service \`${b}' does not exist\n` };
      return { code: s === 'started' ? 0 : s === 'crashed' ? 32 : 3, stdout: ` * status: ${s}\n` };
    }
    return {};
  };
}

describe('OpenRC init system (rc-service, rc-update: argv, no shell)', () => {
  it('parses rc-service status by its word, and by its exit code when it prints none (-q)', () => {
    assert.deepEqual(parseOpenrcStatus(STARTED.code, STARTED.stdout), { active: true, word: 'started' });
    assert.deepEqual(parseOpenrcStatus(STOPPED.code, STOPPED.stdout), { active: false, word: 'stopped' });
    assert.deepEqual(parseOpenrcStatus(32, ' * status: crashed\n'), { active: false, word: 'crashed' });
    assert.deepEqual(parseOpenrcStatus(8, ''), { active: true, word: 'starting' });
    assert.deepEqual(parseOpenrcStatus(3, ''), { active: false, word: 'stopped' });
    assert.deepEqual(parseOpenrcStatus(99, ''), { active: false, word: 'unknown' });
  });

  it('reads the default runlevel from rc-update show', () => {
    assert.deepEqual([...parseRcUpdateShow(RUNLEVEL)], ['crond', 'nginx', 'sshd']);
    assert.deepEqual([...parseRcUpdateShow('')], []);
  });

  it('running: a stopped, not-enabled service is started and added to the default runlevel; a dry run only reads', async () => {
    const fake = createFakeRunner(host({ nginx: 'stopped' }, ['sshd']));
    const mod = createServiceState('running', { facts: {}, runner: fake.run, init: createOpenrc(fake.run) });
    const plan = await mod.run({ name: 'nginx', enabled: true }, { dryRun: true });
    assert.deepEqual(
      [plan.ok, plan.changed, plan.output],
      [true, true, 'would start nginx, enable nginx at boot (dry run)'],
    );
    const reads = [
      ['rc-service', '--exists', '--', 'nginx'],
      ['rc-service', '--', 'nginx', 'status'],
      ['rc-update', 'show', 'default'],
    ];
    assert.deepEqual(fake.argv(), reads);
    const done = await mod.run({ name: 'nginx', enabled: true }, { dryRun: false });
    assert.equal(done.output, 'started nginx, enabled nginx at boot', done.output);
    assert.deepEqual(fake.argv().slice(3), [
      ...reads,
      ['rc-service', '--', 'nginx', 'start'],
      ['rc-update', 'add', '--', 'nginx', 'default'],
    ]);
  });

  it('running on a started, enabled service changes nothing; stopped stops it and removes it from the runlevel', async () => {
    const fake = createFakeRunner(host({ nginx: 'started' }, ['nginx']));
    const init = createOpenrc(fake.run);
    const running = await createServiceState('running', { facts: {}, runner: fake.run, init }).run(
      { name: 'nginx', enabled: true },
      { dryRun: false },
    );
    assert.deepEqual([running.ok, running.changed], [true, false], running.output);
    const stopped = await createServiceState('stopped', { facts: {}, runner: fake.run, init }).run(
      { name: 'nginx', enabled: false },
      { dryRun: false },
    );
    assert.deepEqual([stopped.ok, stopped.changed], [true, true], stopped.output);
    assert.deepEqual(fake.argv().slice(-2), [
      ['rc-service', '--', 'nginx', 'stop'],
      ['rc-update', 'del', '--', 'nginx', 'default'],
    ]);
  });

  it("a crashed service counts as not running; reload, restart and the dependency cache are the tools' own commands", async () => {
    const fake = createFakeRunner(host({ nginx: 'crashed' }, ['nginx']));
    const init = createOpenrc(fake.run);
    assert.equal((await init.status('nginx')).active, false);
    await init.reload('nginx');
    await init.restart('nginx');
    await init.rereadUnits();
    assert.deepEqual(fake.argv().slice(-3), [
      ['rc-service', '--', 'nginx', 'reload'],
      ['rc-service', '--', 'nginx', 'restart'],
      ['rc-update', '--update'],
    ]);
    assert.equal(init.isUnitPath('/etc/init.d/app'), true);
    assert.equal(init.isUnitPath('/etc/conf.d/app'), false);
  });

  it('an unknown service: status says it does not exist, without asking its status', async () => {
    const fake = createFakeRunner(host({}, []));
    const init = createOpenrc(fake.run);
    assert.deepEqual(await init.status('nope'), { exists: false, active: false, needsReload: false });
    assert.deepEqual(fake.argv(), [['rc-service', '--exists', '--', 'nope']]);
    const r = await createServiceState('running', { facts: {}, runner: fake.run, init }).run(
      { name: 'nope' },
      { dryRun: true },
    );
    assert.equal(r.ok, false);
    assert.match(r.output, /no unit named nope on this host \(openrc\)/);
  });

  it('a failed command reports the tool, its argv and its message', async () => {
    const fake = createFakeRunner((cmd) =>
      cmd.args.includes('start')
        ? { code: 1, stderr: ' * ERROR: nginx failed to start\n' }
        : host({ nginx: 'stopped' }, [])(cmd),
    );
    await assert.rejects(
      createOpenrc(fake.run).start('nginx'),
      /rc-service -- nginx start failed \(exit 1\): .*nginx failed to start/,
    );
  });

  it('refuses a name that is an option or a path before running anything', async () => {
    const fake = createFakeRunner();
    const init = createOpenrc(fake.run);
    for (const bad of ['-q', '../etc/passwd', 'a/b', '.hidden', '', 'a b', 'x;reboot'])
      await assert.rejects(init.status(bad), /not an OpenRC service name/, bad);
    assert.deepEqual(fake.argv(), []);
  });

  it('is chosen when OpenRC booted the host (systemd first), and named when no init system is found', () => {
    assert.deepEqual(
      INIT_PLATFORMS.map((p) => p.tool),
      ['systemd', 'openrc'],
    );
    const fake = createFakeRunner();
    const openrcOnly = [
      { ...INIT_PLATFORMS[0]!, running: () => false },
      { ...openrcPlatform, running: () => true },
    ];
    assert.equal(selectInitSystem(fake.run, openrcOnly).tool, 'openrc');
    assert.throws(
      () => selectInitSystem(fake.run, [{ ...openrcPlatform, running: () => false }]),
      /no supported init system .*openrc \(\/run\/openrc\/softlevel exists/,
    );
  });
});
