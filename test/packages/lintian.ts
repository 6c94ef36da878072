// lintian over the three packages of this checkout, run once per test run: it takes minutes on the
// keeper's thousands of files, so debian.test.ts starts it before its installs (it runs while they
// wait on the network) and waits for it when it ends; lintian.test.ts reads the verdict, and starts
// the run itself when it runs alone.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtPackages, packageVersion } from './built';
import { run, type Result } from './debian-root';

let started: Promise<Result> | undefined;

/** lintian's output on the keeper, soul and soul-lint packages of package.json's version. */
export function lintianRun(): Promise<Result> {
  started ??= (async () => {
    const debs = await builtPackages(['keeper', 'soul', 'soul-lint'], packageVersion());
    // Its scratch files in a folder of its own, removed when it is done.
    const tmp = fs.mkdtempSync(path.join(process.env.KEEPER_TEST_TMPDIR ?? os.tmpdir(), 'lintian-'));
    try {
      return await run('lintian', ['--tag-display-limit', '0', debs.keeper, debs.soul, debs['soul-lint']], {
        timeoutMs: 900_000,
        env: { TMPDIR: tmp },
      });
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  })();
  return started;
}
