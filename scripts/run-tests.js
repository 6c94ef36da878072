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
const globs = extra.length > 0 ? extra : unitOnly
  ? ['dist/{activities,agent,api,common,db,hub,keeper,lint,mcp,scenario,secrets,temporal,ui,workflows}/**/*.test.js']
  : ['dist/**/*.test.js'];
const args = [
  require.resolve('mocha/bin/mocha.js'),
  '--reporter', path.join(__dirname, 'mocha-summary-reporter.js'),
  '--timeout', '60000',
  '--exit',
  ...globs,
];
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env: process.env });
process.exit(r.status === null ? 1 : r.status);
