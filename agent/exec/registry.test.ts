import assert from 'node:assert/strict';
import { osFamily, parseOsRelease } from '../facts';
import { PACKAGE_PLATFORMS, NoPlatformError, selectPackageManager } from './registry';
import { createFakeRunner } from './testing';
import type { PackagePlatform } from './types';

describe('execution module registry', () => {
  const { run } = createFakeRunner({});

  it('chooses the package manager by os family', () => {
    assert.equal(selectPackageManager({ os: { family: 'debian' } }, run).tool, 'apt');
    assert.equal(selectPackageManager({ os: { family: 'redhat' } }, run).tool, 'dnf');
    assert.equal(selectPackageManager({ os: { family: 'alpine' } }, run).tool, 'apk');
    // The soulprint's flat form and its names for the Red Hat line.
    assert.equal(selectPackageManager({ os_family: 'debian' }, run).tool, 'apt');
    assert.equal(selectPackageManager({ os_family: 'rhel' }, run).tool, 'dnf');
    assert.equal(selectPackageManager({ os_family: 'fedora' }, run).tool, 'dnf');
  });

  it("chooses from the soul's own facts: the family its os-release gives on Rocky, Fedora and Alpine hosts", () => {
    // /etc/os-release as these distributions ship it (the lines the family is read from).
    const hosts: Array<[string, string, string]> = [
      ['ID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.4"\n', 'rhel', 'dnf'],
      ['ID=almalinux\nID_LIKE="rhel centos fedora"\n', 'rhel', 'dnf'],
      ['ID=fedora\nVERSION_ID=40\n', 'fedora', 'dnf'],
      ['ID=alpine\nVERSION_ID=3.20.3\n', 'alpine', 'apk'],
      ['ID=ubuntu\nID_LIKE=debian\n', 'debian', 'apt'],
    ];
    for (const [release, family, tool] of hosts) {
      const os_family = osFamily(parseOsRelease(release));
      assert.equal(os_family, family, release);
      assert.equal(selectPackageManager({ os_family }, run).tool, tool, release);
    }
  });

  it('names the supported platforms when none matches', () => {
    assert.throws(
      () => selectPackageManager({ os: { family: 'arch' } }, run),
      (err: Error) =>
        err instanceof NoPlatformError &&
        /os.family is "arch"; supported: apt \(os.family "debian"\), dnf \(os.family "redhat" \(or "rhel", "fedora"\)\), apk \(os.family "alpine"\)/.test(
          err.message,
        ),
    );
    assert.throws(() => selectPackageManager({}, run), /os.family is not reported/);
  });

  it('takes an extra platform as one more entry', () => {
    const base = PACKAGE_PLATFORMS[0]!;
    const pacman: PackagePlatform = {
      tool: 'pacman',
      appliesTo: 'os.family "arch"',
      matches: (facts) => facts.os?.family === 'arch',
      create: (runner) => ({ ...base.create(runner), tool: 'pacman' }),
    };
    const platforms = [...PACKAGE_PLATFORMS, pacman];
    assert.equal(selectPackageManager({ os: { family: 'arch' } }, run, platforms).tool, 'pacman');
    assert.equal(selectPackageManager({ os: { family: 'debian' } }, run, platforms).tool, 'apt');
  });
});
