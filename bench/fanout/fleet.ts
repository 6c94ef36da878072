// The service of bench/fanout --real-modules: test/fixtures/services/fleet, the push-mode scenario
// (a package present, a 0600 file, a rendered 0644 file, the files under
// `${input.root}/${soulprint.self.fqdn}/` because the swarm's hosts share one file system). Its
// package is `git` by default, installed on this machine, so core.pkg.installed really reads the
// dpkg database and installs nothing. The files are checked here after a run, because a benchmark whose hosts did
// not end as the service says measured nothing.
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../test/support/repo';
import { gitRepoFrom } from '../../test/runs/keeper';

/** The fixture copied to `dir` and committed, tagged v1; returns its file:// URL. */
export function fleetRepo(dir: string): string {
  return gitRepoFrom(path.join(repoRoot(), 'test', 'fixtures', 'services', 'fleet'), dir, 'v1');
}

/** Each host's files with the content and mode the fixture gives them (default input.message). */
function expected(sid: string): { file: string; content: string; mode: number }[] {
  return [
    { file: 'private.conf', content: `token for ${sid}\n`, mode: 0o600 },
    { file: 'app.conf', content: `message = hello\nhost = ${sid}\n`, mode: 0o644 },
  ];
}

/**
 * Checks every host's files under `root` (content and permission bits); throws listing the first
 * wrong ones. Returns each file's mtime, for checkUnchanged after a run that should change nothing.
 */
export function checkFleetFiles(root: string, sids: string[]): Map<string, number> {
  const mtimes = new Map<string, number>();
  const wrong: string[] = [];
  for (const sid of sids) {
    for (const e of expected(sid)) {
      const p = path.join(root, sid, e.file);
      let st: fs.Stats;
      try {
        st = fs.statSync(p);
      } catch {
        wrong.push(`${p}: missing`);
        continue;
      }
      if ((st.mode & 0o7777) !== e.mode)
        wrong.push(`${p}: mode ${(st.mode & 0o7777).toString(8)}, want ${e.mode.toString(8)}`);
      if (fs.readFileSync(p, 'utf8') !== e.content) wrong.push(`${p}: content differs`);
      mtimes.set(p, st.mtimeMs);
    }
  }
  if (wrong.length > 0)
    throw new Error(`${wrong.length} host file(s) wrong after the run: ${wrong.slice(0, 5).join('; ')}`);
  return mtimes;
}

/** Throws when any file was rewritten since `before` was taken. */
export function checkUnchanged(before: Map<string, number>): void {
  const rewritten = [...before].filter(([p, m]) => fs.statSync(p).mtimeMs !== m).map(([p]) => p);
  if (rewritten.length > 0)
    throw new Error(`${rewritten.length} file(s) rewritten by a run that should change nothing, e.g. ${rewritten[0]}`);
}
