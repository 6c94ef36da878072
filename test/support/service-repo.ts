// Local git repositories of test services (file:// URLs, which the test keepers' policy allows):
// registration clones, resolves and lints a service, so a test that registers one needs a real
// repository. Built from a fixture service directory; commits and tags can be added later, so a
// test can publish versions, move a tag or push to a branch.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fixtureService } from '../lint/paths';

export interface ServiceRepo {
  /** file:// URL of the repository. */
  url: string;
  dir: string;
  git(...args: string[]): string;
  /** Writes files (path relative to the repository -> content; null removes it) and commits them on the current branch. */
  commit(files: Record<string, string | null>, message?: string): string;
  /** Creates the tag at HEAD, or moves it there with `force`. */
  tag(name: string, force?: boolean): void;
}

/** Repositories made in the system temp dir (no `dir` given): removed when the test run ends. */
const made: string[] = [];
// A root-level hook (this module is loaded while mocha loads the test files): one place removes
// every repository the suites made, whichever suite made it and however it ended.
after(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

export function serviceRepo(
  opts: { fixture?: string; dir?: string; tags?: string[]; branch?: string } = {},
): ServiceRepo {
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'service-repo-'));
  if (opts.dir === undefined) made.push(dir);
  fs.cpSync(fixtureService(opts.fixture ?? 'motd'), dir, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@keeper.test', ...args], {
      cwd: dir,
      stdio: 'pipe',
    })
      .toString()
      .trim();
  git('init', '-q', '-b', opts.branch ?? 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  const repo: ServiceRepo = {
    url: `file://${dir}`,
    dir,
    git,
    commit(files, message = 'change') {
      for (const [rel, content] of Object.entries(files)) {
        const p = path.join(dir, rel);
        if (content === null) fs.rmSync(p, { force: true });
        else {
          fs.mkdirSync(path.dirname(p), { recursive: true });
          fs.writeFileSync(p, content);
        }
      }
      git('add', '-A');
      git('commit', '-q', '-m', message);
      return git('rev-parse', 'HEAD');
    },
    tag(name, force = false) {
      git('tag', ...(force ? ['-f'] : []), name);
    },
  };
  for (const t of opts.tags ?? ['v1']) repo.tag(t);
  return repo;
}
