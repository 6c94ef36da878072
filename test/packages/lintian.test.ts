// The packages' unit files and lintian's verdict (issue 14, docs/install.md), from the built .debs
// alone: keeper.service and soul.service verify cleanly with systemd-analyze, and lintian finds no
// error and no warning docs/install.md does not explain. The install, upgrade and purge in a Debian
// root are debian.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../support/repo';
import { builtPackages, type PackageName, packageVersion } from './built';
import { run, type Result } from './debian-root';
import { lintianRun } from './lintian';

const V1 = packageVersion();

describe('Debian packages: unit files and lintian', function () {
  // First run on a machine: three package builds, and lintian takes minutes.
  this.timeout(900_000);
  let lintian: Promise<Result>;
  let debs: Record<string, Partial<Record<PackageName, string>>>;
  const deb = (version: string, pkg: PackageName) =>
    debs[version]?.[pkg] ?? assert.fail(`${pkg} ${version} was not built`);

  before(async function () {
    // Shared with the other package suites (built.ts): built once per test run.
    debs = { [V1]: await builtPackages(['keeper', 'soul'], V1) };
    lintian = lintianRun();
  });

  it("keeper.service and soul.service pass systemd-analyze verify with no warning (against each package's own files)", async () => {
    for (const pkg of ['keeper', 'soul'] as const) {
      // The package's files plus the machine's systemd units (the targets the units name), as on a host.
      const tree = fs.mkdtempSync(path.join(os.tmpdir(), `unit-${pkg}-`));
      try {
        const x = await run('dpkg-deb', ['-x', deb(V1, pkg), tree]);
        assert.equal(x.code, 0, x.stderr);
        fs.cpSync('/lib/systemd/system', path.join(tree, 'lib', 'systemd', 'system'), {
          recursive: true,
          force: false,
          dereference: false,
          verbatimSymlinks: true,
        });
        const v = await run('systemd-analyze', ['verify', `--root=${tree}`, `${pkg}.service`]);
        assert.equal(v.code, 0, v.stderr);
        assert.equal(v.stdout + v.stderr, '', 'no warning either');
      } finally {
        fs.rmSync(tree, { recursive: true, force: true });
      }
    }
  });

  it('lintian finds no error in the three packages; every warning it gives is explained in docs/install.md', async () => {
    const r = await lintian;
    const lines = r.stdout.split('\n').filter((l) => /^[EW]: /.test(l));
    assert.deepEqual(
      lines.filter((l) => l.startsWith('E: ')),
      [],
      r.stdout + r.stderr,
    );
    const docs = fs.readFileSync(path.join(repoRoot(), 'docs', 'install.md'), 'utf8');
    const tags = [...new Set(lines.map((l) => l.split(' ')[2]!))];
    for (const tag of tags)
      assert.ok(docs.includes(`\`${tag}\``), `lintian warning ${tag} is not explained in docs/install.md`);
  });
});
