/**
 * Loads a service from a git repository at a ref. The repository is
 * mirrored bare under `<cacheDir>/repos/<hash of the URL and credential_ref>.git`, the ref
 * (tag, branch, or a full commit id) is resolved to a commit, and the
 * commit's tree is extracted once to `<cacheDir>/commits/<commit>/`. A
 * loaded service is cached in memory by commit: a commit never changes.
 *
 * git runs through execFile/spawn with an argv (no shell), with prompts disabled, without the
 * user's or the system's git config, and with `--` before every user-supplied URL. Every clone
 * and fetch is first checked against the keeper's policy (git-policy.ts), runs under its time
 * and size caps, and follows no redirects. A credential (issue 12, item 5) reaches git only
 * through the environment of that one command, read by an askpass script: it is never in the
 * URL, the mirror's config, git's credential store or an error. git's own output never leaves
 * this file: failures are summarized (summarizeGitError), so error text cannot serve as an
 * oracle about what answered.
 * Tree sizes are checked with `git ls-tree -l` before anything is extracted.
 */
import { execFile, spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { LruMap } from '../../common/lru';
import { LIMITS } from '../limits';
import type { LoadedService } from '../model';
import { loadServiceFromDir } from './dir';
import { gitUrlRefusal, type GitPolicy } from './git-policy';

const run = promisify(execFile);

export class GitLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GitLoadError';
  }
}

export interface GitCredential {
  username: string;
  password: string;
}

export interface GitSource {
  git: string;
  ref: string;
  cacheDir: string;
  policy: GitPolicy;
  /** The service's credential_ref: keys the mirror, so a service without it never reads another's private clone. */
  credentialRef?: string;
  /** The credential_ref's value, resolved by the caller for this load only. */
  credential?: GitCredential;
}

const loaded = new Map<string, LoadedService>();

// Prints the username or the password git asks for, from this command's own environment.
const ASKPASS = `#!/bin/sh
case "$1" in
  Username*) printf '%s\\n' "$KEEPER_GIT_USERNAME" ;;
  *) printf '%s\\n' "$KEEPER_GIT_PASSWORD" ;;
esac
`;

function askpassScript(cacheDir: string): string {
  const file = path.join(cacheDir, 'askpass.sh');
  if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== ASKPASS) {
    fs.mkdirSync(cacheDir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, ASKPASS, { mode: 0o700 });
    fs.renameSync(tmp, file);
  }
  return file;
}

interface GitRun {
  cwd?: string;
  policy?: GitPolicy;
  credential?: GitCredential;
  cacheDir?: string;
  watch?: string;
}

function gitEnv(opts: GitRun): NodeJS.ProcessEnv {
  const schemes = opts.policy ? opts.policy.schemes.join(':') : 'file';
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    // Neither the user's nor the system's config: a `credential.helper=store` there would write the
    // credential to disk, an `url.<x>.insteadOf` would send the clone elsewhere.
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    // Only the transports the policy allows: git's `ext::` and other remote helpers could run commands.
    GIT_ALLOW_PROTOCOL: schemes || 'none',
    GIT_ASKPASS: 'true',
    SSH_ASKPASS: 'true',
  };
  delete env.KEEPER_GIT_USERNAME;
  delete env.KEEPER_GIT_PASSWORD;
  if (opts.credential && opts.cacheDir) {
    env.GIT_ASKPASS = askpassScript(opts.cacheDir);
    env.KEEPER_GIT_USERNAME = opts.credential.username;
    env.KEEPER_GIT_PASSWORD = opts.credential.password;
  }
  return env;
}

function dirBytes(dir: string): number {
  let total = 0;
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else {
        try {
          total += fs.lstatSync(p).size;
        } catch {
          /* removed meanwhile */
        }
      }
    }
  }
  return total;
}

/** One line an operator can act on, from git's stderr; git's own words are never passed on. */
export function summarizeGitError(command: string, stderr: string, code: number | null): string {
  const e = stderr.toLowerCase();
  // A local (file://) repository owned by another user: git refuses it, and only its own words say why.
  const dubious = /detected dubious ownership in repository at '([^'\n]+)'/i.exec(stderr);
  if (dubious) {
    return (
      `git ${command}: git refuses the repository at ${dubious[1]} because another user owns it (dubious ownership); ` +
      `make it owned by the keeper's user, or run as that user: git config --global --add safe.directory ${dubious[1]} (the system git config is not read)`
    );
  }
  if (
    /authentication failed|could not read (username|password)|terminal prompts disabled|requested url returned error: (401|403)|permission denied \(publickey/.test(
      e,
    )
  ) {
    return `git ${command}: the repository refused access (give the service a credential_ref, or check the one it has)`;
  }
  if (/redirect/.test(e))
    return `git ${command}: the repository host answered with a redirect, which the keeper does not follow`;
  if (/repository .*not found|not found|does not appear to be a git repository|returned error: 404/.test(e)) {
    return `git ${command}: the repository was not found (or this keeper may not read it)`;
  }
  if (
    /could not resolve|connection refused|timed out|unreachable|failed to connect|no route to host|couldn't connect|connection reset/.test(
      e,
    )
  ) {
    return `git ${command}: the repository host could not be reached`;
  }
  if (/ssl|certificate|tls/.test(e))
    return `git ${command}: the TLS connection to the repository host failed (is its certificate trusted?)`;
  if (/transport .* not allowed|unsupported|protocol/.test(e))
    return `git ${command}: the URL's transport is not allowed`;
  return `git ${command} failed (exit ${code ?? 'signal'})`;
}

/**
 * Runs one git command. With `watch`, the directory is measured while git runs and the command is
 * stopped once it passes policy.maxRepoBytes; policy.timeoutMs bounds every command.
 */
function git(args: string[], opts: GitRun = {}): Promise<string> {
  const timeoutMs = opts.policy?.timeoutMs ?? 120_000;
  const cap = opts.policy?.maxRepoBytes;
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'credential.helper=', '-c', 'http.followRedirects=false', ...args], {
      cwd: opts.cwd,
      env: gitEnv(opts),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let stopped: string | undefined;
    const stop = (why: string) => {
      stopped ??= why;
      child.kill('SIGKILL');
    };
    child.stdout.on('data', (d: Buffer) => {
      outBytes += d.length;
      if (outBytes > 64 * 1024 * 1024) return stop(`git ${args[0]}: its output passed 64 MiB`);
      out.push(d);
    });
    // Only the tail is kept, to classify; it is never shown.
    child.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-4096);
    });
    const timer = setTimeout(
      () => stop(`git ${args[0]}: stopped after ${Math.round(timeoutMs / 1000)}s (services.git.timeout)`),
      timeoutMs,
    );
    const watcher =
      opts.watch && cap !== undefined
        ? setInterval(() => {
            if (dirBytes(opts.watch!) > cap)
              stop(`git ${args[0]}: the repository passed ${cap} bytes (services.git.max_repo_bytes)`);
          }, 200)
        : undefined;
    child.on('error', (e) => {
      stopped ??= `git ${args[0]}: cannot run git (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (watcher) clearInterval(watcher);
      if (stopped) return reject(new GitLoadError(stopped));
      if (code !== 0) return reject(new GitLoadError(summarizeGitError(args[0], err, code)));
      // A command faster than the watcher's first look is measured once at the end.
      if (opts.watch && cap !== undefined && dirBytes(opts.watch) > cap) {
        return reject(
          new GitLoadError(`git ${args[0]}: the repository passed ${cap} bytes (services.git.max_repo_bytes)`),
        );
      }
      resolve(Buffer.concat(out).toString());
    });
  });
}

function checkInputs(src: GitSource): void {
  if (!src.git || src.git.startsWith('-')) throw new GitLoadError('invalid git URL');
  // Deny by default: a caller that forgot the policy clones nothing.
  if (!src.policy) throw new GitLoadError('no git source policy was given to the loader (services.git)');
  const refusal = gitUrlRefusal(src.git, src.policy, src.credential !== undefined);
  if (refusal) throw new GitLoadError(`the service's git URL ${refusal}`);
  if (!/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(src.ref) || src.ref.includes('..') || src.ref.endsWith('.lock')) {
    throw new GitLoadError(`invalid git ref "${src.ref}": use a tag, a branch or a commit id`);
  }
}

/** The mirror of one source: a service's URL with its credential_ref (never another service's clone). */
function mirrorKey(src: GitSource): string {
  return crypto
    .createHash('sha256')
    .update(`${src.git}\0${src.credentialRef ?? ''}`)
    .digest('hex')
    .slice(0, 24);
}

/**
 * Commits this process resolved from each mirror (`<mirror key> <commit>`). A run loads its
 * version's pinned commit, twice (the API's checks, then render): a commit is immutable, so once
 * this source has produced it, loading it again needs no `git fetch` (about 0.1 s of git per load).
 * Keyed by source so a commit id resolved from one repository never serves another service. At most
 * 4,096 (every push adds one, for the keeper's whole life); one forgotten costs one `git fetch`.
 */
const resolvedFrom = new LruMap<string, true>(4096);

/** Mirrors (or refreshes) the repository and resolves `ref` to a commit id. */
export async function resolveRef(src: GitSource): Promise<{ commit: string; bare: string }> {
  checkInputs(src);
  const key = mirrorKey(src);
  const bare = path.join(src.cacheDir, 'repos', `${key}.git`);
  fs.mkdirSync(path.dirname(bare), { recursive: true });
  const remote = { policy: src.policy, credential: src.credential, cacheDir: src.cacheDir };
  if (!fs.existsSync(path.join(bare, 'HEAD'))) {
    const tmp = `${bare}.${process.pid}.${Date.now()}.tmp`;
    try {
      await git(['clone', '--bare', '--quiet', '--', src.git, tmp], { ...remote, watch: tmp });
    } catch (err) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw err;
    }
    try {
      fs.renameSync(tmp, bare);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true }); // another loader won the race
    }
  } else {
    try {
      await git(
        [
          'fetch',
          '--quiet',
          '--prune',
          '--force',
          '--',
          src.git,
          '+refs/heads/*:refs/heads/*',
          '+refs/tags/*:refs/tags/*',
        ],
        { ...remote, cwd: bare, watch: bare },
      );
    } catch (err) {
      // A mirror that grew past the cap is dropped whole: the next load starts from nothing again.
      if ((err as Error).message.includes('max_repo_bytes')) fs.rmSync(bare, { recursive: true, force: true });
      throw err;
    }
  }
  for (const candidate of [
    `refs/tags/${src.ref}`,
    `refs/heads/${src.ref}`,
    ...(/^[0-9a-f]{40}$/.test(src.ref) ? [src.ref] : []),
  ]) {
    try {
      const commit = (await git(['rev-parse', '--verify', '--quiet', `${candidate}^{commit}`], { cwd: bare })).trim();
      if (/^[0-9a-f]{40}$/.test(commit)) {
        resolvedFrom.set(`${key} ${commit}`, true);
        return { commit, bare };
      }
    } catch {
      // try the next form
    }
  }
  throw new GitLoadError(`ref "${src.ref}" not found in the repository`);
}

async function materialize(bare: string, commit: string, cacheDir: string): Promise<string> {
  const dir = path.join(cacheDir, 'commits', commit);
  if (fs.existsSync(path.join(dir, '.keeper-complete'))) return dir;
  const listing = await git(['ls-tree', '-r', '-l', '-z', commit], { cwd: bare });
  let total = 0;
  let count = 0;
  for (const entry of listing.split('\0').filter(Boolean)) {
    const size = Number(/^\S+ \S+ \S+\s+(\d+|-)\t/.exec(entry)?.[1] ?? 0) || 0;
    if (size > LIMITS.maxRepoBytes)
      throw new GitLoadError(
        `a file in ${commit} is ${size} bytes, over the ${LIMITS.maxRepoBytes}-byte repository limit`,
      );
    total += size;
    if (++count > LIMITS.maxFiles * 5 || total > LIMITS.maxRepoBytes * 4)
      throw new GitLoadError(`commit ${commit} is too large to load`);
  }
  const tmp = `${dir}.${process.pid}.${Date.now()}.tmp`;
  fs.mkdirSync(tmp, { recursive: true });
  const tar = `${tmp}.tar`;
  try {
    await git(['archive', '--format=tar', '-o', tar, commit], { cwd: bare });
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
  if (/^[0-9a-f]{40}$/.test(src.ref)) {
    // The source policy is still checked on every load: a source it refuses now loads nothing.
    checkInputs(src);
    const known = resolvedFrom.get(`${mirrorKey(src)} ${src.ref}`) ? loaded.get(src.ref) : undefined;
    if (known) return { commit: src.ref, service: known };
  }
  const { commit, bare } = await resolveRef(src);
  const hit = loaded.get(commit);
  if (hit) return { commit, service: hit };
  const dir = await materialize(bare, commit, src.cacheDir);
  const service = loadServiceFromDir(dir);
  if (loaded.size > 64) loaded.clear();
  loaded.set(commit, service);
  return { commit, service };
}
