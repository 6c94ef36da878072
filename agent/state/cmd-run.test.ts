import assert from 'node:assert/strict';
import { createProcessRunner } from '../exec/runner';
import { createFakeRunner } from '../exec/testing';
import { capped, createCmdRun } from './cmd-run';

describe('core.cmd.run (fake runner: the exact argv)', () => {
  it('runs argv as given, with cwd, env and timeout; `shell: true` runs the one string with /bin/sh -c', async () => {
    const fake = createFakeRunner({ stdout: 'ok\n' });
    const mod = createCmdRun({ facts: {}, runner: fake.run });
    const r = await mod.run(
      { argv: ['/usr/bin/app', 'migrate', '$HOME; rm -rf /'], cwd: '/', env: { MODE: 'prod' }, timeout: 5 },
      { dryRun: false },
    );
    assert.deepEqual([r.ok, r.changed, r.output], [true, true, 'ran /usr/bin/app, exit 0 (no guard)\nstdout:\nok']);
    assert.deepEqual(fake.calls[0], {
      file: '/usr/bin/app',
      args: ['migrate', '$HOME; rm -rf /'],
      env: { MODE: 'prod' },
      timeoutMs: 5000,
      cwd: '/',
    });
    await mod.run({ argv: ['echo a | wc -c'], shell: true }, { dryRun: false });
    assert.deepEqual([fake.calls[1]!.file, ...fake.calls[1]!.args], ['/bin/sh', '-c', 'echo a | wc -c']);
  });

  it('unless and onlyif run as argv in the dry run too; the plan runs nothing else', async () => {
    const fake = createFakeRunner({ code: 1 });
    const mod = createCmdRun({ facts: {}, runner: fake.run });
    const plan = await mod.run(
      { argv: ['/usr/bin/app', 'init'], unless: ['/usr/bin/app', 'status'] },
      { dryRun: true, showContent: true },
    );
    assert.deepEqual(
      [plan.changed, plan.output],
      [true, 'would run `/usr/bin/app init` (unless: `/usr/bin/app` exited 1) (dry run)'],
    );
    assert.deepEqual(fake.argv(), [['/usr/bin/app', 'status']]);
    const skipped = await mod.run(
      { argv: ['/usr/bin/app', 'init'], onlyif: ['/usr/bin/test', '-e', '/x'] },
      { dryRun: false },
    );
    assert.deepEqual([skipped.changed, skipped.output], [false, 'not run: onlyif: `/usr/bin/test` exited 1']);
    assert.equal(fake.calls.length, 2, 'the command itself never ran');
  });

  it('plans a command with no guard as running every time, not as a change it can know; runs nothing', async () => {
    const fake = createFakeRunner({});
    const mod = createCmdRun({ facts: {}, runner: fake.run });
    const plan = await mod.run({ argv: ['/usr/bin/app', 'reindex'] }, { dryRun: true, showContent: true });
    assert.deepEqual(
      [plan.changed, plan.output],
      [true, 'would run `/usr/bin/app reindex`: runs every time (no guard) (dry run)'],
    );
    assert.equal((plan.diff as { because: string }).because, 'runs every time (no guard)');
    assert.equal(fake.calls.length, 0, 'a plan runs nothing');
  });

  it('refuses a split shell command, a bad env name and a relative creates before running anything', async () => {
    const fake = createFakeRunner();
    const mod = createCmdRun({ facts: {}, runner: fake.run });
    assert.match(
      (await mod.run({ argv: ['echo', 'a'], shell: true }, { dryRun: false })).output,
      /must be one string \(the shell command\) with shell: true/,
    );
    assert.match(
      (await mod.run({ argv: ['x'], env: { 'A-B': '1' } }, { dryRun: false })).output,
      /param "env" has an invalid name "A-B"/,
    );
    assert.match(
      (await mod.run({ argv: ['x'], creates: 'rel' }, { dryRun: false })).output,
      /param "creates" must be an absolute path/,
    );
    assert.deepEqual(fake.calls, []);
  });

  it('keeps the last 16 KiB of output and says how much was cut', () => {
    assert.equal(capped('short'), 'short');
    const out = capped(`${'a'.repeat(10)}${'b'.repeat(16 * 1024)}`);
    assert.equal(out, `[first 10 bytes cut]\n${'b'.repeat(16 * 1024)}`);
  });
});

describe('core.cmd.run (real processes: where they start)', () => {
  it('the command and its unless/onlyif guards start in / unless cwd is given', async () => {
    const mod = createCmdRun({ facts: {}, runner: createProcessRunner({ timeoutMs: 10_000 }) });
    assert.notEqual(process.cwd(), '/');
    // The guard passes only where it starts in / (test -e ./etc/passwd), so the command runs.
    const r = await mod.run({ argv: ['/bin/pwd'], onlyif: ['/usr/bin/test', '-e', 'etc/passwd'] }, { dryRun: false });
    assert.deepEqual([r.ok, r.changed], [true, true]);
    assert.match(r.output, /stdout:\n\/$/);
    const there = await mod.run({ argv: ['/bin/pwd'], cwd: '/tmp' }, { dryRun: false });
    assert.match(there.output, /stdout:\n\/tmp$/);
  });
});
