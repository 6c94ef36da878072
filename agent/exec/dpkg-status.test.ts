import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApt } from './apt';
import { DPKG_ADMIN_DIR, dpkgStatusReader, findInstalled } from './dpkg-status';
import { createFakeRunner } from './testing';

const stanza = (name: string, status: string, version: string, arch = 'amd64') =>
  `Package: ${name}\nStatus: ${status}\nPriority: optional\nArchitecture: ${arch}\nVersion: ${version}\nDescription: ${name}\n multi-line text\n`;

const made: string[] = [];
after(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

/** A dpkg admin dir whose status file is replaced the way dpkg does it: a new file renamed over it. */
function adminDir(): { dir: string; write(text: string): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dpkg-'));
  made.push(dir);
  fs.mkdirSync(path.join(dir, 'updates'));
  return {
    dir,
    write(text) {
      fs.writeFileSync(path.join(dir, 'status-new'), text);
      fs.renameSync(path.join(dir, 'status-new'), path.join(dir, 'status'));
    },
  };
}

describe('the Debian package database read in-process', () => {
  it('knows installed packages and their versions; removed-with-config and half-installed ones are not installed', () => {
    const db = Buffer.from(
      [
        stanza('git', 'install ok installed', '1:2.39.5-0+deb12u2'),
        stanza('nginx', 'deinstall ok config-files', '1.22.1-9'),
        stanza('broken', 'install reinstreq half-installed', '1.0'),
        stanza('held', 'hold ok installed', '3.1'),
        stanza('libc6', 'install ok installed', '2.36-9', 'i386'),
        stanza('libc6', 'install ok installed', '2.36-9'),
        stanza('gitk', 'install ok installed', '9.9'),
      ].join('\n'),
    );
    const names = ['git', 'nginx', 'broken', 'held', 'libc6', 'gitk', 'gi', 'it', 'absent'];
    assert.deepEqual(
      names.map((n) => [n, findInstalled(db, n) ?? null]),
      [
        ['git', '1:2.39.5-0+deb12u2'],
        ['nginx', null],
        ['broken', null],
        ['held', '3.1'],
        ['libc6', '2.36-9'],
        ['gitk', '9.9'],
        ['gi', null],
        ['it', null],
        ['absent', null],
      ],
    );
  });

  it('notices a package removed by hand: a new status file is parsed again', async () => {
    const a = adminDir();
    a.write(
      [stanza('hello', 'install ok installed', '2.10-3'), stanza('git', 'install ok installed', '2.39')].join('\n'),
    );
    const reader = dpkgStatusReader(a.dir);
    assert.deepEqual(await reader.lookup('hello'), { installed: true, version: '2.10-3' });
    a.write(stanza('git', 'install ok installed', '2.39'));
    assert.deepEqual(await reader.lookup('hello'), { installed: false });
    a.write(
      [stanza('git', 'install ok installed', '2.39'), stanza('hello', 'install ok installed', '2.10-4')].join('\n'),
    );
    assert.deepEqual(await reader.lookup('hello'), { installed: true, version: '2.10-4' });
  });

  it('cannot tell while dpkg has changes in its journal, or without a status file: the caller asks dpkg-query', async () => {
    const a = adminDir();
    const reader = dpkgStatusReader(a.dir);
    assert.equal(await reader.lookup('hello'), undefined);
    a.write(stanza('hello', 'install ok installed', '2.10-3'));
    fs.writeFileSync(path.join(a.dir, 'updates', '0000'), stanza('hello', 'deinstall ok config-files', '2.10-3'));
    assert.equal(await reader.lookup('hello'), undefined);
    fs.rmSync(path.join(a.dir, 'updates', '0000'));
    assert.deepEqual(await reader.lookup('hello'), { installed: true, version: '2.10-3' });
  });

  it("answers as dpkg-query does for every package of this machine's own database", async () => {
    const out = execFileSync('dpkg-query', ['-W', '-f', '${Package}\t${Status}\t${Version}\n'], { encoding: 'utf8' });
    const reader = dpkgStatusReader(DPKG_ADMIN_DIR);
    const rows = out
      .trim()
      .split('\n')
      .map((l) => l.split('\t') as [string, string, string]);
    assert.ok(rows.length > 50, `only ${rows.length} packages known to dpkg-query`);
    for (const [name, status, version] of rows) {
      const installed = / ok installed$/.test(status);
      const answer = await reader.lookup(name);
      // dpkg-query lists one row per architecture; an installed row must be seen as installed.
      if (installed) assert.deepEqual(answer, { installed: true, version }, name);
    }
    assert.deepEqual(await reader.lookup('no-such-package-keeper-test'), { installed: false });
  });

  it('apt asks dpkg-query only when the database cannot answer', async () => {
    const a = adminDir();
    a.write(stanza('git', 'install ok installed', '2.39'));
    const fake = createFakeRunner({ stdout: 'install ok installed 2.39\n' });
    const apt = createApt(fake.run, dpkgStatusReader(a.dir));
    assert.deepEqual(await apt.read('git'), { installed: true, satisfied: true, version: '2.39' });
    assert.deepEqual(await apt.read('git', '2.40'), { installed: true, satisfied: false, version: '2.39' });
    assert.deepEqual(fake.argv(), []);
    fs.writeFileSync(path.join(a.dir, 'updates', '0001'), '');
    assert.deepEqual(await apt.read('git'), { installed: true, satisfied: true, version: '2.39' });
    assert.deepEqual(fake.argv(), [['dpkg-query', '-W', '-f', '${Status} ${Version}\n', '--', 'git']]);
  });
});
