// Mocha's spec reporter plus one closing line "N passed, N failed" from mocha's own counts, so a run
// that executed nothing is visible at a glance (and to CI).
'use strict';
const Mocha = require('mocha');

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const s = runner.stats || { passes: 0, failures: 0, pending: 0 };
      process.nextTick(() => process.stdout.write(`\n${s.passes} passed, ${s.failures} failed\n`));
    });
  }
}
module.exports = SummaryReporter;
