/**
 * Package sizes (not a test; issue 14): builds keeper, soul and soul-lint as `make package` does
 * (xz), then reports per package the .deb size, the installed size and its parts (the Node runtime,
 * the npm packages, the compiled code), the file count, the build time, and the
 * `systemd-analyze security` exposure of its unit. Writes bench/results/packages.json.
 *
 *   node dist/bench/packages/run.js [--fast]     (--fast: gzip -1 archives, for a quick look)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const PACKAGES = ['keeper', 'soul', 'soul-lint'] as const;

/** Bytes under a folder (apparent sizes: what the files hold, not the disk blocks). */
function bytes(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += bytes(p);
    else if (e.isFile()) total += fs.statSync(p).size;
  }
  return total;
}

function files(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) n++;
  return n;
}

/** npm packages in a node_modules tree: folders holding a package.json directly under node_modules (or a scope). */
function npmPackages(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || e.name !== 'package.json') continue;
    const parts = path.relative(dir, e.parentPath).split(path.sep);
    const tail = parts.slice(parts.lastIndexOf('node_modules') + 1);
    if (tail.length === 1 || (tail.length === 2 && tail[0]!.startsWith('@'))) n++;
  }
  return n;
}

/** The unit's exposure score (0 best, 10 worst), offline against the package's own files. */
function exposure(tree: string, pkg: string): number | null {
  const unit = path.join(tree, 'lib', 'systemd', 'system', `${pkg}.service`);
  if (!fs.existsSync(unit)) return null;
  fs.cpSync('/lib/systemd/system', path.dirname(unit), { recursive: true, force: false, verbatimSymlinks: true });
  const out = execFileSync('systemd-analyze', ['security', '--offline=yes', `--root=${tree}`, `${pkg}.service`], {
    encoding: 'utf8',
  });
  const m = /Overall exposure level for \S+: ([\d.]+)/.exec(out);
  return m ? Number(m[1]) : null;
}

function main(): void {
  const fast = process.argv.includes('--fast');
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'keeper-bench-packages-'));
  const results: Record<string, unknown>[] = [];
  try {
    for (const pkg of PACKAGES) {
      const t0 = performance.now();
      execFileSync(path.join(ROOT, 'scripts', 'package.sh'), [...(fast ? ['--fast'] : []), '--out', out, pkg], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const buildSeconds = (performance.now() - t0) / 1000;
      const deb = fs.readdirSync(out).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'))!;
      const tree = path.join(out, `tree-${pkg}`);
      execFileSync('dpkg-deb', ['-x', path.join(out, deb), tree]);
      const installedSizeKiB = Number(
        execFileSync('dpkg-deb', ['-f', path.join(out, deb), 'Installed-Size'], { encoding: 'utf8' }).trim(),
      );
      const lib = path.join(tree, 'usr', 'lib', pkg);
      const app = path.join(lib, 'app');
      const nodeModules = path.join(app, 'node_modules');
      results.push({
        package: pkg,
        deb: deb,
        compression: fast ? 'gzip -1' : 'xz',
        deb_bytes: fs.statSync(path.join(out, deb)).size,
        installed_size_kib: installedSizeKiB,
        installed_bytes: bytes(tree),
        runtime_bytes: bytes(path.join(lib, 'node')),
        node_modules_bytes: bytes(nodeModules),
        npm_packages: npmPackages(nodeModules),
        dist_bytes: bytes(path.join(app, 'dist')),
        files: files(tree),
        build_seconds: Math.round(buildSeconds * 10) / 10,
        systemd_security_exposure: exposure(tree, pkg),
      });
      fs.rmSync(tree, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
  const report = {
    bench: 'packages',
    node: process.version,
    cpus: os.cpus().length,
    at: new Date().toISOString(),
    packages: results,
  };
  const file = path.join(ROOT, 'bench', 'results', 'packages.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

main();
