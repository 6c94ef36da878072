#!/usr/bin/env node
// Copies what one package carries (packaging/closure.js) into <stage>/usr/lib/<pkg>/app: the reached
// compiled files without source maps, the assets, and the npm packages of the closure from the
// installed node_modules (checked against package-lock.json by the closure), minus what never runs:
// type declarations and the native Temporal bridges of other platforms.
//
//   node packaging/stage.js <keeper|soul|soul-lint> <stage dir> <version>
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { closure } = require('./closure');

const ROOT = path.resolve(__dirname, '..');
const [pkg, stage, version] = process.argv.slice(2);
if (!pkg || !stage || !version) {
  process.stderr.write('usage: node packaging/stage.js <keeper|soul|soul-lint> <stage dir> <version>\n');
  process.exit(2);
}
const app = path.join(stage, 'usr', 'lib', pkg, 'app');

/**
 * Files of an npm package that never run: declarations, the authors' dotfiles (lint, git and npm
 * settings), and in the Temporal bridge the Rust sources and other platforms' binaries.
 */
function dropped(rel) {
  if (/\.d\.[cm]?ts(\.map)?$/.test(rel)) return true;
  if (rel.startsWith('node_modules/') && rel.split('/').some((part) => part.startsWith('.'))) return true;
  const bridge = 'node_modules/@temporalio/core-bridge/';
  if (rel.startsWith(bridge)) {
    const inner = rel.slice(bridge.length);
    if (/^(sdk-core|src|bridge-macros|scripts)\//.test(inner) || /^Cargo\.(toml|lock)$/.test(inner)) return true;
    if (inner.startsWith('releases/') && !inner.startsWith('releases/x86_64-unknown-linux-gnu/')) return true;
  }
  return false;
}

function copyFile(rel, from = path.join(ROOT, rel)) {
  if (dropped(rel)) return;
  const to = path.join(app, rel);
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(from, to);
  // Nothing here is run as a program but the runtime: node loads scripts and dlopen()s native
  // modules, which need no executable bit (and an npm bin script with `#!/usr/bin/env node` would
  // otherwise name a runtime the package does not depend on).
  fs.chmodSync(to, 0o644);
}

/** Copies a folder; nested node_modules are left out (the closure lists the packages in them it needs). */
function copyTree(rel, skipNested) {
  for (const entry of fs.readdirSync(path.join(ROOT, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const child = `${rel}/${entry.name}`;
    if (entry.isDirectory()) {
      if (skipNested && entry.name === 'node_modules') continue;
      copyTree(child, skipNested);
    } else if (entry.isFile()) {
      copyFile(child);
    } else if (entry.isSymbolicLink()) {
      const target = fs.realpathSync(path.join(ROOT, child));
      if (fs.statSync(target).isFile()) copyFile(child, target);
    }
  }
}

const c = closure(pkg);
fs.rmSync(app, { recursive: true, force: true });
for (const f of c.dist) copyFile(f);
for (const a of c.assets) copyTree(a, false);
for (const key of c.modules) {
  const name = key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
  const only = c.assetOnly[name];
  if (only) for (const f of only) { if (fs.existsSync(path.join(ROOT, key, f))) copyFile(`${key}/${f}`); }
  else copyTree(key, true);
}
// The entry each /usr/bin launcher hands to node (as bin/<command> does in a checkout, without its
// `#!/usr/bin/env node`: the package's node runs it), and a package.json whose version the CLIs
// report (common/version.ts) and whose folder proto/load.ts finds.
const COMMANDS = {
  keeper: { keeper: 'dist/keeper/cli.js', keeperctl: 'dist/cli/main.js' },
  soul: { soul: 'dist/agent/cli.js' },
  'soul-lint': { 'soul-lint': 'dist/lint/cli.js' },
}[pkg];
for (const [command, entry] of Object.entries(COMMANDS)) {
  const file = path.join(app, 'bin', `${command}.js`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `'use strict';\n// ${command}: run by /usr/bin/${command} with the package's own node.\nrequire('../${entry}').main(process.argv.slice(2));\n`);
}
const meta = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
fs.writeFileSync(path.join(app, 'package.json'),
  `${JSON.stringify({ name: pkg, version, private: true, license: meta.license, type: meta.type }, null, 2)}\n`);
process.stdout.write(`${pkg}: ${c.dist.length} compiled files, ${c.modules.length} npm packages\n`);

// The keeper's workflows, bundled now rather than at every start (runs/bundle.ts): an installed
// keeper is ready in seconds instead of spending a minute or more of CPU in webpack.
// The checkout's own prebuilt bundle (`make build`) is the same code when it is current: copied, not rebuilt.
if (pkg === 'keeper') {
  const b = require(path.join(ROOT, 'dist', 'runs', 'bundle.js'));
  const built = b.checkoutBundleIsCurrent()
    ? fs.promises.readFile(b.CHECKOUT_BUNDLE, 'utf8')
    : b.buildWorkflowBundle();
  built.then((code) => {
    fs.writeFileSync(path.join(app, 'dist', 'runs', 'workflow-bundle.js'), code, { mode: 0o644 });
    process.stdout.write(`keeper: workflow bundle prebuilt (${Math.round(code.length / 1024)} KiB)\n`);
  }).catch((err) => {
    process.stderr.write(`stage: cannot bundle the workflows: ${err.message}\n`);
    process.exit(1);
  });
}
