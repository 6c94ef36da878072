// The benchmark's services come from local git repositories, as an operator's would (file:// URL).
import { execFileSync } from 'node:child_process';

/** Makes `dir` (already holding the service's files) a git repository with one commit tagged `tag`; returns its file:// URL. */
export function commitRepo(dir: string, tag = 'v1'): string {
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@keeper.test', ...args], { cwd: dir, stdio: 'pipe' });
  git('init', '-q'); git('add', '-A'); git('commit', '-q', '-m', 'fanout'); git('tag', tag);
  return `file://${dir}`;
}
