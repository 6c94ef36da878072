import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createFakeRunner } from '../exec/testing';
import { createProcessRunner } from '../exec/runner';
import { CONTENT_KEY_FILE, loadContentKey } from './content-identity';
import { createStateRegistry } from './registry';
import type { StateModule } from './types';

// realpath: on some systems the temp dir itself sits behind a symlink, which the rule would refuse.
async function tempDir(): Promise<string> {
  return fs.mkdtemp(path.join(realpathSync(os.tmpdir()), 'keeper-file-state-'));
}

const modeOf = async (p: string) => (await fs.stat(p)).mode & 0o7777;

describe('core.file.present', () => {
  let dir: string;
  let files: StateModule;
  let accountsDir: string;
  const run = (params: unknown, dryRun = false) => files.run(params, { dryRun });

  beforeEach(async () => {
    dir = await tempDir();
    accountsDir = await tempDir();
    const me = os.userInfo();
    await fs.writeFile(path.join(accountsDir, 'passwd'), `someone:x:${me.uid}:${me.gid}::/:/bin/sh\n`);
    await fs.writeFile(path.join(accountsDir, 'group'), `somegroup:x:${me.gid}:\n`);
    const registry = createStateRegistry({
      facts: {},
      runner: createFakeRunner().run,
      accounts: { passwd: path.join(accountsDir, 'passwd'), group: path.join(accountsDir, 'group') },
    });
    files = registry.get('core.file.present')!;
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rm(accountsDir, { recursive: true, force: true });
  });

  it('creates the file and its parents, then reports changed:false the second time', async () => {
    const target = path.join(dir, 'etc', 'app', 'app.conf');
    const first = await run({ path: target, content: 'port = 80\n', mode: '0640' });
    assert.deepEqual([first.ok, first.changed], [true, true]);
    assert.match(first.output, /^created .*app\.conf \(mode 0640\)$/);
    assert.equal(await fs.readFile(target, 'utf8'), 'port = 80\n');
    assert.equal(await modeOf(target), 0o640);
    assert.equal(await modeOf(path.join(dir, 'etc')), 0o755);

    const second = await run({ path: target, content: 'port = 80\n', mode: '0640' });
    assert.deepEqual([second.ok, second.changed], [true, false]);
    assert.match(second.output, /already as desired/);
  });

  it('updates content and detects a mode change, saying which', async () => {
    const target = path.join(dir, 'a.conf');
    await fs.writeFile(target, 'old');
    await fs.chmod(target, 0o600);
    const modeOnly = await run({ path: target, content: 'old', mode: '0644' });
    assert.equal(modeOnly.changed, true);
    assert.match(modeOnly.output, /\(mode 0600->0644\)$/);
    assert.equal(await modeOf(target), 0o644);

    const contentOnly = await run({ path: target, content: 'new' });
    assert.match(contentOnly.output, /\(content updated\)$/);
    assert.equal(await modeOf(target), 0o644, 'an existing file keeps its mode when the step gives none');
    assert.deepEqual(Object.keys(contentOnly.diff ?? {}), ['content']);
    assert.ok(!JSON.stringify(contentOnly.diff).includes('new'), 'the diff never carries content');
  });

  it('resolves owner and group names from the account files', async () => {
    const target = path.join(dir, 'owned');
    const r = await run({ path: target, content: 'x', owner: 'someone', group: 'somegroup' });
    assert.equal(r.ok, true, r.output);
    const st = await fs.stat(target);
    assert.deepEqual([st.uid, st.gid], [os.userInfo().uid, os.userInfo().gid]);
    assert.equal((await run({ path: target, content: 'x', owner: 'someone', group: 'somegroup' })).changed, false);
    const unknown = await run({ path: target, content: 'x', owner: 'nobody-here' });
    assert.match(unknown.output, /unknown user "nobody-here"/);
  });

  it('plans a file owned by a user and group an earlier step of the same plan would create; a run still refuses them', async () => {
    const target = path.join(dir, 'app.env');
    const params = { path: target, content: 'x', mode: '0640', owner: 'root', group: 'app' };
    const earlier = [{ index: 0, module: 'core.user.present', changed: true, paths: [], names: ['app'] }];
    const planned = await files.run({ ...params, owner: 'app' }, { dryRun: true, earlier });
    assert.deepEqual([planned.ok, planned.changed], [true, true], planned.output);
    assert.match(planned.output, /^would create .*app\.env/);
    // Only what an earlier step would create: another name, or the same one unchanged, is still unknown.
    const other = await files.run(params, { dryRun: true, earlier: [{ ...earlier[0]!, names: ['web'] }] });
    assert.match(other.output, /unknown user "root"|unknown group "app"/);
    const unchanged = await files.run(
      { ...params, owner: 'app' },
      { dryRun: true, earlier: [{ ...earlier[0]!, changed: false }] },
    );
    assert.match(unchanged.output, /unknown (user|group) "app"/);
    const applied = await files.run({ ...params, owner: 'app' }, { dryRun: false, earlier });
    assert.deepEqual([applied.ok, applied.output.match(/unknown user "app"/) !== null], [false, true]);
    await assert.rejects(fs.stat(target), { code: 'ENOENT' });
  });

  it('reports what would change in a dry run and changes nothing', async () => {
    const target = path.join(dir, 'sub', 'dry.conf');
    const r = await run({ path: target, content: 'x' }, true);
    assert.deepEqual([r.ok, r.changed], [true, true]);
    assert.match(r.output, /^would create .*dry\.conf \(mode 0644\) \(dry run\)$/);
    await assert.rejects(fs.stat(path.join(dir, 'sub')), { code: 'ENOENT' });
  });

  it('shows a unified diff of the content in a dry run only when the keeper allows it', async () => {
    const target = path.join(dir, 'app.conf');
    await fs.writeFile(target, 'port=80\nname=a\n', { mode: 0o644 });
    const shown = await files.run(
      { path: target, content: 'port=8080\nname=a\n' },
      { dryRun: true, showContent: true },
    );
    const content = (shown.diff as { content: { unified: string; before: { sha256: string } } }).content;
    assert.equal(content.unified, `--- a${target}\n+++ b${target}\n@@ -1,2 +1,2 @@\n-port=80\n+port=8080\n name=a\n`);
    assert.match(content.before.sha256, /^[0-9a-f]{64}$/);
    // A step with a secret (the keeper does not set showContent) and a real apply carry hashes only.
    const hidden = await files.run({ path: target, content: 'port=8080\nname=a\n' }, { dryRun: true });
    assert.equal(JSON.stringify(hidden.diff).includes('port='), false);
    const applied = await files.run(
      { path: target, content: 'port=8080\nname=a\n' },
      { dryRun: false, showContent: true },
    );
    assert.equal(JSON.stringify(applied.diff).includes('port='), false);
    assert.equal(await fs.readFile(target, 'utf8'), 'port=8080\nname=a\n');
  });

  it('refuses a target that is a symlink, leaving the link and its destination alone', async () => {
    const real = path.join(dir, 'real');
    await fs.writeFile(real, 'keep');
    const link = path.join(dir, 'link');
    await fs.symlink(real, link);
    const r = await run({ path: link, content: 'overwrite' });
    assert.deepEqual([r.ok, r.changed], [false, false]);
    assert.match(r.output, /link is a symlink; refusing to follow a symlink out of place \(target\)/);
    assert.equal(await fs.readFile(real, 'utf8'), 'keep');
    assert.ok((await fs.lstat(link)).isSymbolicLink());
  });

  it('refuses a path with a symlinked parent directory', async () => {
    const realDir = path.join(dir, 'realdir');
    await fs.mkdir(realDir);
    await fs.symlink(realDir, path.join(dir, 'linkdir'));
    const r = await run({ path: path.join(dir, 'linkdir', 'deeper', 'f'), content: 'x' });
    assert.equal(r.ok, false);
    assert.match(r.output, /linkdir is a symlink; refusing to follow a symlink out of place \(parent of /);
    assert.deepEqual(await fs.readdir(realDir), []);
  });

  it('refuses relative paths, NUL bytes, bad modes and unknown params before touching anything', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ path: 'etc/app.conf', content: 'x' }, /must be absolute, got "etc\/app.conf"/],
      [{ path: '../x', content: 'x' }, /must be absolute/],
      [{ path: `${dir}/a\0b`, content: 'x' }, /NUL byte/],
      [{ path: `${dir}/m`, content: 'x', mode: '999' }, /octal text like "0644", got "999"/],
      [{ path: `${dir}/m`, content: 'x', mode: 'rwxr-xr-x' }, /octal text/],
      [{ path: `${dir}/m`, contents: 'x' }, /unknown param "contents"/],
      [{ path: `${dir}/m` }, /param "content" is required/],
      ['not an object', /params must be an object/],
    ];
    for (const [params, why] of cases) {
      const r = await run(params);
      assert.equal(r.ok, false, JSON.stringify(params));
      assert.match(r.output, why);
      assert.match(r.output, /^core\.file\.present: invalid params: /);
    }
    assert.deepEqual(await fs.readdir(dir), []);
  });

  it('canonicalises the path lexically', async () => {
    const r = await run({ path: `${dir}/a/../b.conf`, content: 'x' });
    assert.equal(r.ok, true, r.output);
    assert.deepEqual(await fs.readdir(dir), ['b.conf']);
  });

  it('fails cleanly on a directory in place of the file, leaving no temp file', async () => {
    const target = path.join(dir, 'isdir');
    await fs.mkdir(target);
    const r = await run({ path: target, content: 'x' });
    assert.equal(r.ok, false);
    assert.match(r.output, /isdir exists and is not a regular file/);
    assert.deepEqual(await fs.readdir(dir), ['isdir']);
  });
});

describe('core.file.rendered', () => {
  it('writes rendered content exactly like core.file.present', async () => {
    const dir = await tempDir();
    try {
      const registry = createStateRegistry({ facts: {}, runner: createFakeRunner().run });
      const rendered = registry.get('core.file.rendered')!;
      const target = path.join(dir, 'nginx.conf');
      const first = await rendered.run(
        { path: target, content: 'server_name web1;\n', mode: '0644' },
        { dryRun: false },
      );
      assert.deepEqual([first.ok, first.changed], [true, true]);
      const again = await rendered.run(
        { path: target, content: 'server_name web1;\n', mode: '0644' },
        { dryRun: false },
      );
      assert.equal(again.changed, false);
      const viaPresent = await registry
        .get('core.file.present')!
        .run({ path: target, content: 'server_name web1;\n', mode: '0644' }, { dryRun: false });
      assert.equal(viaPresent.changed, false);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('core.file.present validate: (a real command run on the candidate file)', () => {
  let dir: string;
  let files: StateModule;
  beforeEach(async () => {
    dir = await tempDir();
    files = createStateRegistry({ facts: {}, runner: createProcessRunner() }).get('core.file.present')!;
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('replaces the live file only when the validator accepts the candidate; a refusal leaves it untouched and no temp file', async () => {
    const target = path.join(dir, 'app.conf');
    await fs.writeFile(target, 'good: old\n');
    const validate = ['grep', '-q', '^good:', '%s'];
    const refused = await files.run({ path: target, content: 'bad\n', validate }, { dryRun: false });
    assert.equal(refused.ok, false);
    assert.match(refused.output, /validate: grep refused the new content \(exit 1\); the live file is unchanged/);
    assert.equal(await fs.readFile(target, 'utf8'), 'good: old\n');
    assert.deepEqual(await fs.readdir(dir), ['app.conf']);
    const accepted = await files.run({ path: target, content: 'good: new\n', validate }, { dryRun: false });
    assert.equal(accepted.ok, true, accepted.output);
    assert.equal(await fs.readFile(target, 'utf8'), 'good: new\n');
  });

  it('refuses a validate without the %s placeholder before touching anything', async () => {
    const target = path.join(dir, 'x');
    const r = await files.run({ path: target, content: 'x', validate: ['true'] }, { dryRun: false });
    assert.equal(r.ok, false);
    assert.match(r.output, /%s/);
    await assert.rejects(fs.stat(target));
  });
});

describe('file identities for the keeper (a copy or link of a secret file)', () => {
  let dir: string;
  let files: StateModule;
  let key: Buffer;
  beforeEach(async () => {
    dir = await tempDir();
    key = loadContentKey(dir);
    files = createStateRegistry({ facts: {}, runner: createFakeRunner().run, contentKey: key }).get(
      'core.file.present',
    )!;
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('makes one 0600 key per soul and keeps it', async () => {
    assert.equal((await fs.stat(path.join(dir, CONTENT_KEY_FILE))).mode & 0o777, 0o600);
    assert.deepEqual(loadContentKey(dir), key);
    await fs.writeFile(path.join(dir, CONTENT_KEY_FILE), 'short');
    assert.throws(() => loadContentKey(dir), /holds 5 bytes, not 32; remove it/);
  });

  it('reports the written file, and a copy by the same keyed digest and a hard link by the same inode', async () => {
    const secret = path.join(dir, 'app.conf');
    const w = await files.run({ path: secret, content: 'password = s3cret\n' }, { dryRun: false });
    assert.equal(w.files?.length, 1);
    const written = w.files![0]!;
    assert.equal(written.role, 'written');
    assert.equal(written.digest, createHmac('sha256', key).update('password = s3cret\n').digest('hex'));
    assert.notEqual(
      written.digest,
      createHash('sha256').update('password = s3cret\n').digest('hex'),
      'not a plain hash',
    );
    await fs.copyFile(secret, path.join(dir, 'app.conf.bak'));
    await fs.link(secret, path.join(dir, 'app.conf.link'));
    const read = async (p: string) => {
      const r = await files.run({ path: p, content: 'plain\n' }, { dryRun: true, showContent: true });
      assert.equal(r.files?.length, 1, JSON.stringify(r));
      return r.files![0]!;
    };
    const copy = await read(path.join(dir, 'app.conf.bak'));
    assert.deepEqual(
      [copy.role, copy.digest === written.digest, copy.file_id === written.file_id],
      ['read', true, false],
    );
    const link = await read(path.join(dir, 'app.conf.link'));
    assert.equal(link.file_id, written.file_id);
    // The identities are not part of the diff a user sees.
    const r = await files.run({ path: secret, content: 'plain\n' }, { dryRun: true });
    assert.ok(!JSON.stringify(r.diff).includes(written.digest));
  });
});
