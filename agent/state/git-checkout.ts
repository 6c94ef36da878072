// core.git.checkout { repo, dest, ref? }: `dest` is a checkout of `repo` with its HEAD at the commit
// `ref` (a branch, a tag, HEAD, or a full commit id) names in the repository now (Ansible `git`, Salt
// `git.latest`). The commit to move to is asked of the repository with `git ls-remote`, which changes
// nothing on the host, so a plan names the commit it would move from and to. The apply clones (a new
// dest) or fetches, then checks the commit out detached. Local changes in dest are never overwritten:
// the step fails naming them. git runs as argv with `--` before URLs and paths, with only the http(s),
// ssh, git and file transports allowed (never `ext::`, which runs a command) and no terminal prompt.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { tail, type Command } from '../exec/runner';
import { canonicalTarget } from './file-target';
import { ParamError, optionalString, readParams, requireString } from './params';
import { defineState } from './shape';
import type { StateDeps, StateModule } from './types';

const REPO = /^((https?|ssh|git|file):\/\/(?!-)\S+|[A-Za-z0-9_][A-Za-z0-9._-]*@[A-Za-z0-9.-]+:[^\s:]\S*|\/\S*)$/;
const REF = /^[A-Za-z0-9_][A-Za-z0-9_./+-]*$/;
const COMMIT = /^[0-9a-f]{40}$/;
const TIMEOUT_MS = 30 * 60_000;
// Git reads no terminal, no system or user config that could name a helper program, and speaks only
// the transports the contract allows.
const GIT_ENV = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_ALLOW_PROTOCOL: 'http:https:ssh:git:file',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_ASKPASS: '/bin/false',
  SSH_ASKPASS: '/bin/false',
};

interface GitParams {
  repo: string;
  dest: string;
  ref: string;
}
interface Current {
  /** The commit `ref` names in the repository now. */
  target: string;
  /** dest's HEAD; undefined when dest is not there yet. */
  head?: string;
}

/** The repository as reports show it: an http(s) URL without its user and password. */
export function shownRepo(repo: string): string {
  return repo.replace(/^(https?:\/\/)[^/@]*@/, '$1');
}

export function createGitCheckout(deps: StateDeps): StateModule {
  const git = async (args: string[], cwd?: string): Promise<string> => {
    const cmd: Command = { file: 'git', args, env: GIT_ENV, timeoutMs: TIMEOUT_MS, ...(cwd ? { cwd } : {}) };
    const r = await deps.runner(cmd);
    if (r.code !== 0) {
      // The repository's URL (which may hold a password) is left out of what git said.
      const said = tail(r.stderr || r.stdout).replace(/(https?:\/\/)[^/@\s]*@/g, '$1');
      throw new Error(`git ${args[0]} failed (exit ${r.code}): ${said}`);
    }
    return r.stdout;
  };

  /** The commit `ref` names in `repo`: a commit id as given, else a tag (peeled) before a branch, or HEAD. */
  const resolve = async (p: GitParams): Promise<string> => {
    if (COMMIT.test(p.ref)) return p.ref;
    // `ref^{}` too: the pattern `v1` does not match the line of the commit an annotated tag points at.
    const out = await git(['ls-remote', '--', p.repo, p.ref, `${p.ref}^{}`]).catch((err: Error) => {
      throw new Error(
        `param "repo": could not read ${shownRepo(p.repo)}: ${err.message.split(p.repo).join(shownRepo(p.repo))}`,
      );
    });
    const refs = new Map(
      out
        .split('\n')
        .filter((l) => l.includes('\t'))
        .map((l) => [l.slice(l.indexOf('\t') + 1), l.slice(0, l.indexOf('\t'))] as const),
    );
    const found =
      refs.get(`refs/tags/${p.ref}^{}`) ??
      refs.get(`refs/tags/${p.ref}`) ??
      refs.get(`refs/heads/${p.ref}`) ??
      refs.get(p.ref);
    if (found === undefined)
      throw new ParamError(
        `param "ref": ${shownRepo(p.repo)} has no branch or tag named ${JSON.stringify(p.ref)}; give a branch, a tag, or a full 40-digit commit id`,
      );
    return found;
  };

  return defineState<GitParams, Current>({
    name: 'core.git.checkout',
    parse(raw) {
      const p = readParams(raw, ['repo', 'dest', 'ref']);
      const repo = requireString(p, 'repo');
      if (!REPO.test(repo) || repo.length > 4096)
        throw new ParamError(
          'param "repo" must be an https://, http://, ssh://, git:// or file:// URL, user@host:path, or an absolute path',
        );
      const ref = optionalString(p, 'ref') ?? 'HEAD';
      if (!REF.test(ref) || ref.length > 256 || ref.includes('..'))
        throw new ParamError(`param "ref" must be a branch, a tag or a commit id, got ${JSON.stringify(ref)}`);
      const dest = canonicalTarget(requireString(p, 'dest'));
      if (dest === '/') throw new ParamError('param "dest" must not be /');
      return { repo, dest, ref };
    },
    async read(p) {
      const st = await fs
        .lstat(p.dest)
        .catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? null : Promise.reject(e)));
      if (st !== null && !st.isDirectory())
        throw new ParamError(`param "dest": ${p.dest} exists and is not a directory`);
      const entries = st === null ? [] : await fs.readdir(p.dest);
      if (st !== null && entries.length > 0 && !entries.includes('.git'))
        throw new ParamError(
          `param "dest": ${p.dest} holds files and is not a git checkout; give an empty or missing folder`,
        );
      let head: string | undefined;
      if (entries.includes('.git')) {
        const origin = (await git(['-C', p.dest, 'config', '--get', 'remote.origin.url']).catch(() => '')).trim();
        if (origin !== p.repo)
          throw new ParamError(
            `param "dest": ${p.dest} is a checkout of ${shownRepo(origin) || 'another repository'}, not ${shownRepo(p.repo)}; remove it or give another dest`,
          );
        const dirty = (await git(['-C', p.dest, 'status', '--porcelain', '--untracked-files=no'])).trimEnd();
        if (dirty)
          throw new Error(
            `${p.dest} has local changes that a checkout would overwrite (${dirty
              .split('\n')
              .slice(0, 5)
              .map((l) => l.slice(3))
              .join(', ')}); commit or undo them on the host first`,
          );
        head = (await git(['-C', p.dest, 'rev-parse', '--verify', 'HEAD'])).trim();
      }
      return { target: await resolve(p), ...(head === undefined ? {} : { head }) };
    },
    diff(p, cur) {
      if (cur.head === cur.target) return null;
      const repo = shownRepo(p.repo);
      return {
        summary:
          cur.head === undefined
            ? `clone ${repo} into ${p.dest} at ${p.ref} (${cur.target.slice(0, 12)})`
            : `check out ${p.ref} in ${p.dest}: move from ${cur.head.slice(0, 12)} to ${cur.target.slice(0, 12)}`,
        diff: { repo, dest: p.dest, ref: p.ref, from: cur.head ?? null, to: cur.target },
      };
    },
    describe: (p, cur) => `${p.dest} is at ${p.ref} (${cur.target.slice(0, 12)})`,
    async apply(p, cur, change) {
      if (cur.head === undefined) {
        await fs.mkdir(path.dirname(p.dest), { recursive: true, mode: 0o755 });
        await git(['clone', '--quiet', '--no-checkout', '--', p.repo, p.dest]);
      } else {
        await git(['-C', p.dest, 'fetch', '--quiet', '--tags', '--force', 'origin']);
      }
      // A commit the repository names by no branch or tag is fetched by its id (servers allow it for
      // reachable commits); then the commit is checked out detached.
      const have = await git(['-C', p.dest, 'cat-file', '-e', `${cur.target}^{commit}`]).then(
        () => true,
        () => false,
      );
      if (!have) await git(['-C', p.dest, 'fetch', '--quiet', 'origin', cur.target]);
      await git(['-C', p.dest, 'checkout', '--quiet', '--detach', cur.target]);
      return change.summary
        .replace(/^clone /, 'cloned ')
        .replace(/^check out /, 'checked out ')
        .replace(': move from ', ': moved from ');
    },
  });
}
