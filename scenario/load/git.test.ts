import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadServiceFromGit, GitLoadError, summarizeGitError } from './git';
import type { GitPolicy } from './git-policy';
import { fixtureService } from '../../test/lint/paths';

function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@e',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@e',
    },
  })
    .toString()
    .trim();
}

// What the demo and the tests run with: local repositories allowed (file), any host.
const OPEN: GitPolicy = { schemes: ['https', 'file'], hosts: ['*'], maxRepoBytes: 64 * 1024 * 1024, timeoutMs: 60_000 };

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
    const tagged = await loadServiceFromGit({ git: repo, ref: 'v1.0.0', cacheDir, policy: OPEN });
    assert.equal(tagged.commit, sh(repo, 'rev-parse', 'v1.0.0^{commit}'));
    assert.equal(tagged.service.name, 'motd');
    assert.deepEqual(tagged.service.errors, []);
    assert.match(tagged.service.templates.get('etc/motd.tmpl')!.source, /Administrators/);
    const head = await loadServiceFromGit({ git: repo, ref: 'main', cacheDir, policy: OPEN });
    assert.equal(head.commit, sh(repo, 'rev-parse', 'HEAD'));
    assert.equal(head.service.templates.get('etc/motd.tmpl')!.source, 'v2 {{ .message }}\n');
  });

  it('caches by commit: the same commit gives the same loaded service', async function () {
    const a = await loadServiceFromGit({ git: repo, ref: 'v1.0.0', cacheDir, policy: OPEN });
    const b = await loadServiceFromGit({ git: repo, ref: a.commit, cacheDir, policy: OPEN });
    assert.equal(b.service, a.service);
    assert.ok(fs.existsSync(path.join(cacheDir, 'commits', a.commit, 'service.yml')));
  });

  it('loads a commit its source has produced without git, and never serves it to another source', async function () {
    const copy = path.join(work, 'motd-copy');
    fs.cpSync(repo, copy, { recursive: true });
    const first = await loadServiceFromGit({ git: copy, ref: 'v1.0.0', cacheDir, policy: OPEN });
    // The origin is gone: a tag needs a fetch and fails; the pinned commit loads from this process.
    fs.rmSync(copy, { recursive: true, force: true });
    await assert.rejects(loadServiceFromGit({ git: copy, ref: 'v1.0.0', cacheDir, policy: OPEN }), GitLoadError);
    const pinned = await loadServiceFromGit({ git: copy, ref: first.commit, cacheDir, policy: OPEN });
    assert.equal(pinned.service, first.service);
    // The policy still decides: a source it refuses now loads nothing, pinned or not.
    await assert.rejects(
      loadServiceFromGit({ git: copy, ref: first.commit, cacheDir, policy: { ...OPEN, schemes: ['https'] } }),
      GitLoadError,
    );
    // Another repository that never held this commit is not served it from the cache.
    const other = path.join(work, 'other');
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(other, 'README'), 'x\n');
    sh(other, 'init', '-q', '-b', 'main');
    sh(other, 'add', '.');
    sh(other, 'commit', '-q', '-m', 'other');
    await assert.rejects(loadServiceFromGit({ git: other, ref: first.commit, cacheDir, policy: OPEN }), /not found/);
  });

  it('refuses unknown refs and refs that look like options', async function () {
    await assert.rejects(loadServiceFromGit({ git: repo, ref: 'v9', cacheDir, policy: OPEN }), /ref "v9" not found/);
    await assert.rejects(
      loadServiceFromGit({ git: repo, ref: '--upload-pack=x', cacheDir, policy: OPEN }),
      GitLoadError,
    );
    await assert.rejects(
      loadServiceFromGit({ git: '--upload-pack=x', ref: 'main', cacheDir, policy: OPEN }),
      /invalid git URL/,
    );
  });

  it('never runs a remote helper that could execute commands (ext::)', async function () {
    const marker = path.join(cacheDir, 'ext-ran');
    await assert.rejects(
      loadServiceFromGit({ git: `ext::sh -c touch% ${marker}`, ref: 'main', cacheDir, policy: OPEN }),
      GitLoadError,
    );
    assert.equal(fs.existsSync(marker), false);
  });

  it('refuses a file:// or local-path repository when the policy does not allow file, before running git', async function () {
    const https = { ...OPEN, schemes: ['https'] };
    const fresh = path.join(work, 'cache-nofile');
    for (const url of [repo, `file://${repo}`]) {
      await assert.rejects(
        loadServiceFromGit({ git: url, ref: 'main', cacheDir: fresh, policy: https }),
        /uses the scheme "file", which this keeper does not allow \(services\.git\.schemes: https\)/,
      );
    }
    assert.equal(fs.existsSync(path.join(fresh, 'repos')), false, 'nothing was cloned');
  });

  it('refuses hosts off the allow-list and credentials in the URL', async function () {
    const policy = { ...OPEN, hosts: ['git.example.com'] };
    await assert.rejects(
      loadServiceFromGit({ git: 'https://127.0.0.1:8200/v1/sys/health', ref: 'main', cacheDir, policy }),
      /names the host "127\.0\.0\.1", which is not in this keeper's allow-list/,
    );
    await assert.rejects(
      loadServiceFromGit({ git: 'https://bob:hunter2@git.example.com/x.git', ref: 'main', cacheDir, policy }),
      (err: Error) => /credential_ref/.test(err.message) && !err.message.includes('hunter2'),
    );
  });

  it('stops a clone that passes the size cap and leaves no partial mirror', async function () {
    const big = path.join(work, 'big');
    fs.mkdirSync(big);
    sh(big, 'init', '-q', '-b', 'main');
    // Incompressible content, so the pack is as large as the files.
    fs.writeFileSync(path.join(big, 'blob'), randomBytes(3 * 1024 * 1024));
    sh(big, 'add', '.');
    sh(big, 'commit', '-q', '-m', 'big');
    const capped = path.join(work, 'cache-capped');
    await assert.rejects(
      loadServiceFromGit({
        git: `file://${big}`,
        ref: 'main',
        cacheDir: capped,
        policy: { ...OPEN, maxRepoBytes: 512 * 1024 },
      }),
      /passed 524288 bytes \(services\.git\.max_repo_bytes\)/,
    );
    assert.deepEqual(fs.readdirSync(path.join(capped, 'repos')), []);
  });

  it("summarizes git's errors without passing its words on", function () {
    assert.equal(
      summarizeGitError(
        'clone',
        "fatal: unable to access 'https://h/x/': Failed to connect to h port 8200 after 0 ms: Connection refused",
        128,
      ),
      'git clone: the repository host could not be reached',
    );
    assert.equal(
      summarizeGitError('clone', "fatal: could not read Username for 'https://h': terminal prompts disabled", 128),
      'git clone: the repository refused access (give the service a credential_ref, or check the one it has)',
    );
    assert.equal(
      summarizeGitError('clone', "fatal: repository 'https://h/x/' not found", 128),
      'git clone: the repository was not found (or this keeper may not read it)',
    );
    assert.equal(summarizeGitError('fetch', '{"initialized":true,"sealed":false}', 1), 'git fetch failed (exit 1)');
  });

  it('keeps the reason git gives for a file:// repository owned by another user, with the fix (issue 37 row 6)', () => {
    // Real git, as the keeper runs it (no system config), on a repository another uid owns.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'git-dubious-'));
    try {
      const src = path.join(dir, 'src');
      execFileSync('git', ['init', '-q', src]);
      execFileSync('git', [
        '-C',
        src,
        '-c',
        'user.email=a@example.com',
        '-c',
        'user.name=a',
        'commit',
        '-q',
        '--allow-empty',
        '-m',
        'x',
      ]);
      execFileSync('chown', ['-R', '12345:12345', src]);
      const r = spawnSync('git', ['clone', '-q', `file://${src}`, path.join(dir, 'dst')], {
        encoding: 'utf8',
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir },
      });
      assert.equal(r.status, 128, r.stderr);
      assert.equal(
        summarizeGitError('clone', r.stderr, r.status),
        `git clone: git refuses the repository at ${src}/.git because another user owns it (dubious ownership); ` +
          `make it owned by the keeper's user, or run as that user: git config --global --add safe.directory ${src}/.git (the system git config is not read)`,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
