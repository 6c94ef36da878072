#!/usr/bin/env node
// Runs the compiled test suite with mocha. `--unit` runs only the tests beside the code (no stack);
// the default runs everything, integration tests under test/ included (they need `make stack`).
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '..');
const unitOnly = process.argv.includes('--unit');
const extra = process.argv.slice(2).filter((a) => a !== '--unit');
if (!fs.existsSync(path.join(root, 'dist'))) {
  console.error('run-tests: dist/ is missing; run `npm run build` first');
  process.exit(2);
}
// The unit tests are found, not listed: every *.test.js beside the code, under any top folder of
// dist/ except test/ (the integration tests) and ui-app/ (the bundled web UI), so a new folder's
// tests (proto/, cli/, bench/) run without anyone editing this file.
function unitTests() {
  const found = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.test.js')) found.push(path.relative(root, p));
    }
  };
  for (const e of fs.readdirSync(path.join(root, 'dist'), { withFileTypes: true })) {
    if (e.isDirectory() && e.name !== 'test' && e.name !== 'ui-app' && e.name !== 'node_modules') walk(path.join(root, 'dist', e.name));
  }
  return found.sort();
}
const globs = extra.length > 0 ? extra : unitOnly ? unitTests() : ['dist/**/*.test.js'];
// The production rehearsal (test/prod/) runs with the rest: its suite builds the Temporal server from
// its Go module the first time (about 3 minutes, cached like the stack's tools), starts it on ports
// of its own and stops it again; `make test-prod` runs it alone.
const args = [
  require.resolve('mocha/bin/mocha.js'),
  '--reporter', path.join(__dirname, 'mocha-summary-reporter.js'),
  '--timeout', '60000',
  '--exit',
  ...globs,
];
// Every temp file of the run (tests, souls, git, browsers) goes under one directory of its own in the
// system temp dir, removed when the run ends, also when a test fails or the run is interrupted, so a
// run leaves nothing behind. The reporter names what tests forgot to remove, so leaks get fixed.
const os = require('node:os');
const runTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'keeper-test-run-'));
fs.chmodSync(runTmp, 0o1777); // like /tmp: helpers running as other users (postgres) may write here
const cleanup = () => fs.rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
// The child gets the signal too (same process group); wait for it, then clean up.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => {});
let status = 1;
try {
  const r = spawnSync(process.execPath, args, {
    cwd: root, stdio: 'inherit', env: { ...process.env, TMPDIR: runTmp, KEEPER_TEST_TMPDIR: runTmp },
  });
  status = r.status === null ? 1 : r.status;
} finally {
  cleanup();
}
process.exit(status);
