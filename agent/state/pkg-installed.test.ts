import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { selectPackageManager } from '../exec/registry';
import { createProcessRunner, type Command, type CommandRunner } from '../exec/runner';
import { createFakeRunner } from '../exec/testing';
import { createPkgInstalled } from './pkg-installed';

const debian = { os: { family: 'debian' } };

describe('core.pkg.installed', () => {
  it('installs a missing package through the host platform module', async () => {
    const fake = createFakeRunner({ code: 1, stderr: 'dpkg-query: no packages found matching nginx' }, { code: 0 });
    const r = await createPkgInstalled({ facts: debian, runner: fake.run }).run({ name: 'nginx' }, { dryRun: false });
    assert.deepEqual(r, {
      changed: true,
      ok: true,
      output: 'installed nginx with apt-get',
      diff: { package: 'nginx', from: null, to: 'latest' },
    });
    assert.deepEqual(
      fake.argv().map((a) => a[0]),
      ['dpkg-query', 'apt-cache', 'apt-get'],
    );
  });

  it('names the version apt would install in a dry run of a missing package (a plan shows it)', async () => {
    const fake = createFakeRunner(
      { code: 1, stderr: 'dpkg-query: no packages found matching hello' },
      { stdout: 'hello:\n  Installed: (none)\n  Candidate: 2.10-3\n  Version table:\n' },
    );
    const r = await createPkgInstalled({ facts: debian, runner: fake.run }).run({ name: 'hello' }, { dryRun: true });
    assert.deepEqual(r, {
      changed: true,
      ok: true,
      output: 'would install hello with apt (dry run)',
      diff: { package: 'hello', from: null, to: '2.10-3' },
    });
    assert.deepEqual(fake.argv(), [
      ['dpkg-query', '-W', '-f', '${Status} ${Version}\n', '--', 'hello'],
      ['apt-cache', 'policy', '--', 'hello'],
    ]);
  });

  it('reports changed:false and runs no install when the package is there', async () => {
    const fake = createFakeRunner({ stdout: 'install ok installed 1.22.1-9\n' });
    const r = await createPkgInstalled({ facts: debian, runner: fake.run }).run({ name: 'nginx' }, { dryRun: false });
    assert.deepEqual(r, { changed: false, ok: true, output: 'nginx 1.22.1-9 is already installed' });
    assert.equal(fake.calls.length, 1);
  });

  it('only reads in a dry run', async () => {
    const fake = createFakeRunner({ stdout: 'install ok installed 1.0-1\n' });
    const r = await createPkgInstalled({ facts: debian, runner: fake.run }).run(
      { name: 'nginx', version: '2.0-1' },
      { dryRun: true },
    );
    assert.deepEqual(
      [r.ok, r.changed, r.output],
      [true, true, 'would change nginx from 1.0-1 to 2.0-1 with apt (dry run)'],
    );
    assert.deepEqual(
      fake.argv().map((a) => a[0]),
      ['dpkg-query'],
    );
  });

  it('refuses malicious names with a clear message and runs no command', async () => {
    for (const family of ['debian', 'redhat', 'alpine']) {
      const fake = createFakeRunner({});
      const pkg = createPkgInstalled({ facts: { os: { family } }, runner: fake.run });
      const semicolon = await pkg.run({ name: 'foo; rm -rf /' }, { dryRun: false });
      assert.deepEqual([semicolon.ok, semicolon.changed], [false, false]);
      assert.match(
        semicolon.output,
        /^core\.pkg\.installed: invalid params: package name "foo; rm -rf \/" contains whitespace .*refused$/,
      );
      const option = await pkg.run({ name: '--config=x' }, { dryRun: false });
      assert.match(option.output, /package name "--config=x" starts with "-" and would be read as an option; refused/);
      const version = await pkg.run({ name: 'curl', version: '1;reboot' }, { dryRun: false });
      assert.equal(version.ok, false);
      assert.equal(fake.calls.length, 0, family);
    }
  });

  it('fails with the platform error on an unsupported host', async () => {
    const fake = createFakeRunner({});
    const r = await createPkgInstalled({ facts: { os: { family: 'plan9' } }, runner: fake.run }).run(
      { name: 'curl' },
      { dryRun: false },
    );
    assert.equal(r.ok, false);
    assert.match(r.output, /no package manager for this host: os.family is "plan9"/);
    assert.equal(fake.calls.length, 0);
  });

  it('reports a failed install as ok:false with the tool output', async () => {
    const fake = createFakeRunner({ code: 1 }, { code: 100, stderr: 'E: Unable to locate package nosuch' });
    const r = await createPkgInstalled({ facts: debian, runner: fake.run }).run({ name: 'nosuch' }, { dryRun: false });
    assert.deepEqual([r.ok, r.changed], [false, false]);
    assert.match(
      r.output,
      /apply failed: apt-get install nosuch failed \(exit 100\): E: Unable to locate package nosuch/,
    );
  });
});

// The real-system tier: runs the real dpkg-query on this machine, never an installer.
describe('core.pkg.installed on this host', () => {
  it('reads an installed package with the real tool and changes nothing', async () => {
    const commands: Command[] = [];
    const real = createProcessRunner({ timeoutMs: 20_000 });
    const recording: CommandRunner = (cmd) => {
      commands.push(cmd);
      // Only reads may reach the real host from a test.
      if (cmd.file !== 'dpkg-query') throw new Error(`test refused to run ${cmd.file}`);
      return real(cmd);
    };
    if (existsSync('/usr/bin/dpkg-query')) {
      const r = await createPkgInstalled({ facts: debian, runner: recording }).run({ name: 'dpkg' }, { dryRun: false });
      assert.deepEqual([r.ok, r.changed], [true, false], r.output);
      assert.match(r.output, /^dpkg \d\S* is already installed$/);
      assert.deepEqual(
        commands.map((c) => c.file),
        ['dpkg-query'],
      );
    } else {
      // Not a Debian host: the same step must fail clearly rather than guess a tool.
      const facts = { os: { family: 'not-debian' } };
      assert.throws(() => selectPackageManager(facts, recording), /no package manager for this host/);
      const r = await createPkgInstalled({ facts, runner: recording }).run({ name: 'dpkg' }, { dryRun: false });
      assert.equal(r.ok, false);
      assert.equal(commands.length, 0);
    }
  });
});
