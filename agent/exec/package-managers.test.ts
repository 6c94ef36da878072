import assert from 'node:assert/strict';
import { createApk } from './apk';
import { createApt } from './apt';
import { createDnf } from './dnf';
import { createFakeRunner } from './testing';

describe('apt execution module', () => {
  it('reads with dpkg-query and reports the installed version', async () => {
    const fake = createFakeRunner({ stdout: 'install ok installed 1.22.1-9\n' });
    const state = await createApt(fake.run).read('nginx');
    assert.deepEqual(state, { installed: true, satisfied: true, version: '1.22.1-9' });
    assert.deepEqual(fake.argv(), [['dpkg-query', '-W', '-f', '${Status} ${Version}\n', '--', 'nginx']]);
  });

  it('treats "no packages found" and removed-with-config packages as not installed', async () => {
    const missing = createFakeRunner({ code: 1, stderr: 'dpkg-query: no packages found matching nginx' });
    assert.deepEqual(await createApt(missing.run).read('nginx'), { installed: false, satisfied: false });
    const removed = createFakeRunner({ stdout: 'deinstall ok config-files 1.22.1-9\n' });
    assert.deepEqual(await createApt(removed.run).read('nginx'), { installed: false, satisfied: false });
  });

  it('compares a wanted version exactly', async () => {
    const fake = createFakeRunner({ stdout: 'install ok installed 1.22.1-9\n' });
    assert.equal((await createApt(fake.run).read('nginx', '1.22.1-8')).satisfied, false);
  });

  it('installs non-interactively, without recommends, keeping local config files', async () => {
    const fake = createFakeRunner({});
    await createApt(fake.run).install('nginx', '1.22.1-9');
    assert.deepEqual(fake.argv(), [
      [
        'apt-get',
        'install',
        '-y',
        '--no-install-recommends',
        '-o',
        'Dpkg::Options::=--force-confold',
        '-o',
        'DPkg::Lock::Timeout=300',
        '--',
        'nginx=1.22.1-9',
      ],
    ]);
    assert.equal(fake.calls[0]?.env?.DEBIAN_FRONTEND, 'noninteractive');
  });

  it('reports the tool error on a failed install', async () => {
    const fake = createFakeRunner({ code: 100, stderr: 'E: Unable to locate package nginx' });
    await assert.rejects(
      createApt(fake.run).install('nginx'),
      /apt-get install nginx failed \(exit 100\): E: Unable to locate package nginx/,
    );
  });
});

describe('dnf execution module', () => {
  it('reads with rpm -q and installs with dnf install -y', async () => {
    const fake = createFakeRunner({ code: 1, stdout: 'package nginx is not installed' }, { code: 0 });
    const dnf = createDnf(fake.run);
    assert.deepEqual(await dnf.read('nginx'), { installed: false, satisfied: false });
    await dnf.install('nginx');
    assert.deepEqual(fake.argv(), [
      ['rpm', '-q', '--queryformat', '%{VERSION}-%{RELEASE}\n', '--', 'nginx'],
      ['dnf', 'install', '-y', '--', 'nginx'],
    ]);
  });

  it('lets rpm match a wanted version and reports the other installed one', async () => {
    const fake = createFakeRunner({ code: 1 }, { code: 0, stdout: '1.20.1-14.el9\n' });
    const state = await createDnf(fake.run).read('nginx', '1.22.1');
    assert.deepEqual(state, { installed: true, satisfied: false, version: '1.20.1-14.el9' });
    assert.deepEqual(fake.argv()[0], ['rpm', '-q', '--queryformat', '%{VERSION}-%{RELEASE}\n', '--', 'nginx-1.22.1']);
  });
});

describe('apk execution module', () => {
  it('reads with apk info -e and installs with apk add', async () => {
    const fake = createFakeRunner({ code: 1 }, { code: 0 });
    const apk = createApk(fake.run);
    assert.deepEqual(await apk.read('curl'), { installed: false, satisfied: false });
    await apk.install('curl', '8.5.0-r0');
    assert.deepEqual(fake.argv(), [
      ['apk', 'info', '-e', '--', 'curl'],
      ['apk', 'add', '--', 'curl=8.5.0-r0'],
    ]);
  });
});

describe('every execution module refuses a malicious name before running anything', () => {
  for (const [tool, create] of [
    ['apt', createApt],
    ['dnf', createDnf],
    ['apk', createApk],
  ] as const) {
    it(tool, async () => {
      const fake = createFakeRunner({});
      const pm = create(fake.run);
      await assert.rejects(pm.read('foo; rm -rf /'), /refused/);
      await assert.rejects(pm.install('--config=x'), /starts with "-"/);
      await assert.rejects(pm.install('nginx', '1.0 --force'), /refused/);
      assert.equal(fake.calls.length, 0);
    });
  }
});

describe('package lists and removal: one call each, argv only', () => {
  it('apt installs a list in one apt-get call and purges or removes a list in one', async () => {
    const fake = createFakeRunner();
    const apt = createApt(fake.run);
    assert.equal(await apt.installAll([{ name: 'less' }, { name: 'ed' }]), 'installed less ed with apt-get');
    assert.equal(await apt.remove(['less', 'ed'], true), 'purged less ed with apt-get');
    assert.equal(await apt.remove(['less'], false), 'removed less with apt-get');
    assert.deepEqual(
      fake.argv().map((a) => [a[0], a[1], ...a.slice(a.indexOf('--'))]),
      [
        ['apt-get', 'install', '--', 'less', 'ed'],
        ['apt-get', 'purge', '--', 'less', 'ed'],
        ['apt-get', 'remove', '--', 'less'],
      ],
    );
    await assert.rejects(apt.remove(['less', '--force-yes'], true), /package name/);
    assert.equal(fake.calls.length, 3, 'a bad name in the list runs nothing');
  });
});
