// Mocha's spec reporter plus one closing line "N passed, N failed" from mocha's own counts, so a run
// that executed nothing is visible at a glance (and to CI).
'use strict';
const Mocha = require('mocha');

// scripts/run-tests.js gives the run its own temp dir and removes it afterwards; what is still in it
// when the last test has ended was left behind by a test: name it so the leak gets fixed.
function reportLeftovers() {
  const dir = process.env.KEEPER_TEST_TMPDIR;
  if (!dir) return;
  let names = [];
  try { names = require('node:fs').readdirSync(dir); } catch { return; }
  if (names.length === 0) return;
  const shown = names.slice(0, 10).join(', ') + (names.length > 10 ? ', ...' : '');
  process.stdout.write(`\ntemp: tests left ${names.length} entries in their temp dir (${shown}); the runner removes them\n`);
}

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const s = runner.stats || { passes: 0, failures: 0, pending: 0 };
      process.nextTick(() => {
        reportLeftovers();
        process.stdout.write(`\n${s.passes} passed, ${s.failures} failed\n`);
      });
    });
  }
}
module.exports = SummaryReporter;
