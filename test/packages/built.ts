// The Debian packages of this checkout, built once per test run and shared by every suite that
// installs them (debian.test.ts, guide.test.ts, modules/nginx-site-soul.test.ts). Each .deb costs
// 8 to 25 seconds of scripts/package.sh --fast; built per suite they were built four times a run.
// The files live in the run's temp dir (KEEPER_TEST_TMPDIR, scripts/run-tests.js) until the run ends.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../support/repo';
import { script } from './debian-root';

export type PackageName = 'keeper' | 'soul' | 'soul-lint';

/** package.json's version: what `make package` builds and what the guide installs. */
export const packageVersion = (): string =>
  JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')).version as string;

let dir: string | undefined;
const packagesDir = (): string => {
  dir ??= fs.mkdtempSync(path.join(process.env.KEEPER_TEST_TMPDIR ?? os.tmpdir(), 'packages-'));
  return dir;
};

/** One promise per version and package: a suite asking while another's build runs waits for that build. */
const builds = new Map<string, Promise<string>>();
/** Builds run one after another: the machine's cores are shared with the stack and the other tests. */
let queue: Promise<unknown> = Promise.resolve();

function buildOne(version: string, pkg: PackageName): Promise<string> {
  const key = `${version}/${pkg}`;
  let p = builds.get(key);
  if (!p) {
    const out = path.join(packagesDir(), version);
    // --fast: the same contents as `make package`, in gzip -1 archives rather than xz.
    p = queue.then(async () => {
      await script('package.sh', ['--fast', '--version', version, '--out', out, pkg]);
      const deb = path.join(out, `${pkg}_${version}_amd64.deb`);
      if (!fs.existsSync(deb)) throw new Error(`scripts/package.sh did not write ${deb}`);
      return deb;
    });
    // A failed build fails every suite that asked for it, and is not retried by the next one.
    queue = p.catch(() => undefined);
    builds.set(key, p);
  }
  return p;
}

/**
 * The .deb files of `pkgs` at `version` (default package.json's), built on first request in this
 * run and shared after it; keys are the package names. Callers must not modify or remove them.
 */
export async function builtPackages<P extends PackageName>(
  pkgs: readonly P[],
  version: string = packageVersion(),
): Promise<Record<P, string>> {
  const paths = await Promise.all(pkgs.map((pkg) => buildOne(version, pkg)));
  return Object.fromEntries(pkgs.map((pkg, i) => [pkg, paths[i]])) as Record<P, string>;
}

// Removed when the last suite has ended (a root hook: this module is loaded with the test files), so
// the run's leftover check names only what a test forgot.
if (typeof after === 'function')
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
    builds.clear();
  });
