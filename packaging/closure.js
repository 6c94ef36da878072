#!/usr/bin/env node
// What one Debian package must carry of the build, computed, not listed by hand: the compiled files
// its entry points reach (the `require`/`import()`/`require.resolve` graph of dist/), and the npm
// packages those reach, closed over package-lock.json's dependencies with Node's resolution rules.
// So the soul never carries express or Temporal, and a new import ships without editing a list.
//
//   node packaging/closure.js <keeper|soul|soul-lint>    prints JSON {dist: [...], modules: [...]}
//
// Paths are relative to the repository root; modules are lockfile keys (node_modules/a/node_modules/b),
// sorted, so the staging that copies them is deterministic.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { builtinModules } = require('node:module');

const ROOT = path.resolve(__dirname, '..');
const BUILTIN = new Set(builtinModules);

/**
 * Entry points per package. `globs` are extra roots loaded without a literal require: the workflow
 * code Temporal's bundler reads from a path, the migrations knex lists from a directory.
 * `assetOnly` are npm packages used as files, not code: the keeper serves Scalar's browser bundle
 * (api/docs.ts) and never runs the package, so its 80 MB of dependencies stay out.
 */
const PACKAGES = {
  keeper: {
    entries: ['dist/keeper/cli.js', 'dist/cli/main.js', 'dist/runs/workflows/index.js'],
    dirs: ['dist/db/migrations'],
    assets: ['dist/ui-app', 'proto/keeper'],
    assetOnly: { '@scalar/api-reference': ['package.json', 'LICENSE', 'dist/index.js', 'dist/browser/standalone.js'] },
  },
  soul: { entries: ['dist/agent/cli.js'], dirs: [], assets: [], assetOnly: {} },
  'soul-lint': { entries: ['dist/lint/cli.js'], dirs: [], assets: [], assetOnly: {} },
};

const SPEC = /\b(?:require|require\.resolve|import)\(\s*(["'])([^"'\n]+)\1\s*\)/g;

function packageName(spec) {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function resolveFile(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  for (const f of [base, `${base}.js`, `${base}.json`, path.join(base, 'index.js')]) {
    if (fs.existsSync(f) && fs.statSync(f).isFile()) return f;
  }
  throw new Error(`closure: ${path.relative(ROOT, from)} requires ${spec}, which is not built (run make build)`);
}

/** The dist files reachable from the roots, and the bare npm names they import. */
function distClosure(roots) {
  const files = new Set();
  const bare = new Set();
  const queue = roots.map((r) => path.join(ROOT, r));
  while (queue.length > 0) {
    const f = queue.pop();
    if (files.has(f)) continue;
    files.add(f);
    if (!f.endsWith('.js')) continue;
    for (const m of fs.readFileSync(f, 'utf8').matchAll(SPEC)) {
      const spec = m[2];
      if (spec.startsWith('.') || spec.startsWith('/')) queue.push(resolveFile(f, spec));
      else if (!spec.startsWith('node:') && !BUILTIN.has(packageName(spec))) bare.add(packageName(spec));
    }
  }
  return { files: [...files].map((f) => path.relative(ROOT, f)), bare: [...bare] };
}

/** Node's lookup: from the package at `key` (a lockfile path), the nearest node_modules/<name> above. */
function lookup(lock, key, name) {
  let dir = key;
  for (;;) {
    const candidate = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (dir === '') return undefined;
    const i = dir.lastIndexOf('/node_modules/');
    dir = i < 0 ? '' : dir.slice(0, i);
  }
}

function moduleClosure(bare, assetOnly) {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
  // An optional peer the project itself depends on is the one it chose: knex loads its database
  // driver by the configured client name (`pg`), which no compiled file requires by itself.
  const chosen = new Set(Object.keys(lock.packages[''].dependencies ?? {}));
  const seen = new Set();
  const queue = [];
  const want = (from, name, optional) => {
    const key = lookup(lock, from, name);
    if (!key) {
      if (optional) return;
      throw new Error(`closure: ${from || 'the build'} needs ${name}, which package-lock.json does not hold`);
    }
    // Optional packages for other platforms (other CPUs, musl) are in the lockfile, not on disk.
    if (!fs.existsSync(path.join(ROOT, key))) {
      if (optional || lock.packages[key].optional) return;
      throw new Error(`closure: ${key} is in package-lock.json but not installed (run make deps)`);
    }
    queue.push(key);
  };
  for (const name of bare) want('', name, false);
  while (queue.length > 0) {
    const key = queue.pop();
    if (seen.has(key)) continue;
    seen.add(key);
    const name = key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (assetOnly[name]) continue;
    const entry = lock.packages[key];
    for (const d of Object.keys(entry.dependencies ?? {})) want(key, d, false);
    for (const d of Object.keys(entry.optionalDependencies ?? {})) want(key, d, true);
    // knex names its drivers in peerDependenciesMeta only (optional), not in peerDependencies.
    const peers = new Set([...Object.keys(entry.peerDependencies ?? {}), ...Object.keys(entry.peerDependenciesMeta ?? {})]);
    for (const d of [...peers].sort()) {
      const optional = entry.peerDependenciesMeta?.[d]?.optional === true;
      if (!optional || chosen.has(d)) want(key, d, optional);
    }
  }
  const modules = [...seen].sort();
  for (const key of modules) {
    const installed = JSON.parse(fs.readFileSync(path.join(ROOT, key, 'package.json'), 'utf8')).version;
    if (installed !== lock.packages[key].version) {
      throw new Error(`closure: ${key} is ${installed} on disk but ${lock.packages[key].version} in package-lock.json (run make deps)`);
    }
  }
  return modules;
}

function closure(pkg) {
  const spec = PACKAGES[pkg];
  if (!spec) throw new Error(`closure: unknown package ${pkg} (keeper, soul or soul-lint)`);
  const migrations = spec.dirs.flatMap((d) => fs.readdirSync(path.join(ROOT, d)).filter((f) => f.endsWith('.js')).map((f) => `${d}/${f}`));
  const { files, bare } = distClosure([...spec.entries, ...migrations]);
  return {
    dist: files.sort(),
    assets: spec.assets,
    modules: moduleClosure(bare, spec.assetOnly),
    assetOnly: spec.assetOnly,
  };
}

module.exports = { closure, PACKAGES };

if (require.main === module) {
  try {
    process.stdout.write(`${JSON.stringify(closure(process.argv[2]), null, 1)}\n`);
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
