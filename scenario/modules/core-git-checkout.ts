import type { ModuleSpec } from './types';
import { ABS_PATH } from './core-file-present';

/** A repository URL git may fetch from: https, http, ssh, git or file URLs, scp-like `user@host:path`,
 *  or an absolute path; never a transport that runs a command (`ext::`) or an option. */
export const GIT_REPO = {
  type: 'string',
  minLength: 2,
  maxLength: 4096,
  pattern: '^((https?|ssh|git|file)://(?!-)\\S+|[A-Za-z0-9_][A-Za-z0-9._-]*@[A-Za-z0-9.-]+:[^\\s:][^\\s]*|/\\S*)$',
} as const;
/** A branch, a tag, HEAD or a full commit id; never an option. */
export const GIT_REF = {
  type: 'string',
  minLength: 1,
  maxLength: 256,
  pattern: '^[A-Za-z0-9_][A-Za-z0-9_./+-]*$',
} as const;

/**
 * `dest` is a checkout of `repo` at `ref` (a branch, a tag or a commit), its HEAD detached at the commit
 * `ref` names now (Ansible `git`, Salt `git.latest`). Local changes in `dest` are never overwritten.
 */
export const coreGitCheckout: ModuleSpec = {
  name: 'core.git.checkout',
  description: 'a directory is a git checkout of a repository at a branch, tag or commit',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['repo', 'dest'],
    properties: { repo: GIT_REPO, dest: ABS_PATH, ref: GIT_REF },
  },
};
