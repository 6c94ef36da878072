import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadServiceFromGit, GitLoadError } from './git';
import { fixtureService } from '../../test/lint/paths';

function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' } }).toString().trim();
}

describe('loading a service from git', function () {
  this.timeout(30_000);
  let work: string;
  let repo: string;
  let cacheDir: string;

  before(function () {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'keeper-git-'));
    repo = path.join(work, 'motd');
    cacheDir = path.join(work, 'cache');
    fs.cpSync(fixtureService('motd'), repo, { recursive: true });
    sh(repo, 'init', '-q', '-b', 'main');
    sh(repo, 'add', '.');
    sh(repo, 'commit', '-q', '-m', 'v1');
    sh(repo, 'tag', 'v1.0.0');
    fs.writeFileSync(path.join(repo, 'templates/etc/motd.tmpl'), 'v2 {{ .message }}\n');
    sh(repo, 'commit', '-q', '-am', 'v2');
  });

  after(function () {
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('resolves a tag and a branch to their commits and loads each', async function () {
    const tagged = await loadServiceFromGit({ git: repo, ref: 'v1.0.0', cacheDir });
    assert.equal(tagged.commit, sh(repo, 'rev-parse', 'v1.0.0^{commit}'));
    assert.equal(tagged.service.name, 'motd');
    assert.deepEqual(tagged.service.errors, []);
    assert.match(tagged.service.templates.get('etc/motd.tmpl')!.source, /Administrators/);
    const head = await loadServiceFromGit({ git: repo, ref: 'main', cacheDir });
    assert.equal(head.commit, sh(repo, 'rev-parse', 'HEAD'));
    assert.equal(head.service.templates.get('etc/motd.tmpl')!.source, 'v2 {{ .message }}\n');
  });

  it('caches by commit: the same commit gives the same loaded service', async function () {
    const a = await loadServiceFromGit({ git: repo, ref: 'v1.0.0', cacheDir });
    const b = await loadServiceFromGit({ git: repo, ref: a.commit, cacheDir });
    assert.equal(b.service, a.service);
    assert.ok(fs.existsSync(path.join(cacheDir, 'commits', a.commit, 'service.yml')));
  });

  it('refuses unknown refs and refs that look like options', async function () {
    await assert.rejects(loadServiceFromGit({ git: repo, ref: 'v9', cacheDir }), /ref "v9" not found/);
    await assert.rejects(loadServiceFromGit({ git: repo, ref: '--upload-pack=x', cacheDir }), GitLoadError);
    await assert.rejects(loadServiceFromGit({ git: '--upload-pack=x', ref: 'main', cacheDir }), /invalid git URL/);
  });

  it('never runs a remote helper that could execute commands (ext::)', async function () {
    const marker = path.join(cacheDir, 'ext-ran');
    await assert.rejects(loadServiceFromGit({ git: `ext::sh -c touch% ${marker}`, ref: 'main', cacheDir }), GitLoadError);
    assert.equal(fs.existsSync(marker), false);
  });
});
