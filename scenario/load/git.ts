/**
 * Loads a service from a git repository at a ref. The repository is
 * mirrored bare under `<cacheDir>/repos/<hash of the URL>.git`, the ref
 * (tag, branch, or a full commit id) is resolved to a commit, and the
 * commit's tree is extracted once to `<cacheDir>/commits/<commit>/`. A
 * loaded service is cached in memory by commit: a commit never changes.
 *
 * git runs through execFile with an argv (no shell), with prompts disabled,
 * and with `--` before every user-supplied URL. Tree sizes are checked with
 * `git ls-tree -l` before anything is extracted.
 */
import { execFile } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { LIMITS } from '../limits';
import type { LoadedService } from '../model';
import { loadServiceFromDir } from './dir';

const run = promisify(execFile);

export class GitLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GitLoadError';
  }
}

export interface GitSource {
  git: string;
  ref: string;
  cacheDir: string;
}

const loaded = new Map<string, LoadedService>();

async function git(args: string[], cwd?: string): Promise<string> {
  try {
    const { stdout } = await run('git', args, {
      cwd,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 120_000,
      // Only plain transports: git's `ext::` and other remote helpers could run commands, whatever
      // URL the catalog let through.
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'true', LC_ALL: 'C', GIT_ALLOW_PROTOCOL: 'https:http:ssh:git:file' },
    });
    return stdout;
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new GitLoadError(`git ${args[0]} failed: ${(err.stderr || err.message).trim().split('\n').slice(-1)[0]}`);
  }
}

function checkInputs(src: GitSource): void {
  if (!src.git || src.git.startsWith('-')) throw new GitLoadError(`invalid git URL "${src.git}"`);
  if (!/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(src.ref) || src.ref.includes('..') || src.ref.endsWith('.lock')) {
    throw new GitLoadError(`invalid git ref "${src.ref}": use a tag, a branch or a commit id`);
  }
}

/** Mirrors (or refreshes) the repository and resolves `ref` to a commit id. */
export async function resolveRef(src: GitSource): Promise<{ commit: string; bare: string }> {
  checkInputs(src);
  const key = crypto.createHash('sha256').update(src.git).digest('hex').slice(0, 24);
  const bare = path.join(src.cacheDir, 'repos', `${key}.git`);
  fs.mkdirSync(path.dirname(bare), { recursive: true });
  if (!fs.existsSync(path.join(bare, 'HEAD'))) {
    const tmp = `${bare}.${process.pid}.${Date.now()}.tmp`;
    await git(['clone', '--bare', '--quiet', '--', src.git, tmp]);
    try {
      fs.renameSync(tmp, bare);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true }); // another loader won the race
    }
  } else {
    await git(['fetch', '--quiet', '--prune', '--force', '--', src.git, '+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'], bare);
  }
  for (const candidate of [`refs/tags/${src.ref}`, `refs/heads/${src.ref}`, ...(/^[0-9a-f]{40}$/.test(src.ref) ? [src.ref] : [])]) {
    try {
      const commit = (await git(['rev-parse', '--verify', '--quiet', `${candidate}^{commit}`], bare)).trim();
      if (/^[0-9a-f]{40}$/.test(commit)) return { commit, bare };
    } catch {
      // try the next form
    }
  }
  throw new GitLoadError(`ref "${src.ref}" not found in ${src.git}`);
}

async function materialize(bare: string, commit: string, cacheDir: string): Promise<string> {
  const dir = path.join(cacheDir, 'commits', commit);
  if (fs.existsSync(path.join(dir, '.keeper-complete'))) return dir;
  const listing = await git(['ls-tree', '-r', '-l', '-z', commit], bare);
  let total = 0;
  let count = 0;
  for (const entry of listing.split('\0').filter(Boolean)) {
    const size = Number(/^\S+ \S+ \S+\s+(\d+|-)\t/.exec(entry)?.[1] ?? 0) || 0;
    if (size > LIMITS.maxRepoBytes) throw new GitLoadError(`a file in ${commit} is ${size} bytes, over the ${LIMITS.maxRepoBytes}-byte repository limit`);
    total += size;
    if (++count > LIMITS.maxFiles * 5 || total > LIMITS.maxRepoBytes * 4) throw new GitLoadError(`commit ${commit} is too large to load`);
  }
  const tmp = `${dir}.${process.pid}.${Date.now()}.tmp`;
  fs.mkdirSync(tmp, { recursive: true });
  const tar = `${tmp}.tar`;
  try {
    await git(['archive', '--format=tar', '-o', tar, commit], bare);
    await run('tar', ['-xf', tar, '-C', tmp, '--no-same-owner', '--no-same-permissions']);
    fs.writeFileSync(path.join(tmp, '.keeper-complete'), commit);
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    try {
      fs.renameSync(tmp, dir);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(tar, { force: true });
  }
  return dir;
}

export async function loadServiceFromGit(src: GitSource): Promise<{ commit: string; service: LoadedService }> {
  const { commit, bare } = await resolveRef(src);
  const hit = loaded.get(commit);
  if (hit) return { commit, service: hit };
  const dir = await materialize(bare, commit, src.cacheDir);
  const service = loadServiceFromDir(dir);
  if (loaded.size > 64) loaded.clear();
  loaded.set(commit, service);
  return { commit, service };
}
