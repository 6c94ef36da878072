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

// CI has a time budget (40 minutes): the slowest top-level suites, hooks (keepers, souls, roots
// started in before/after) included, say where it goes without a second instrumented run.
// `times`: [title, ms] pairs, from one mocha process or from all of scripts/run-tests.js's lanes.
function reportSlowest(times) {
  const slow = [...times].sort((a, b) => b[1] - a[1]).slice(0, 15);
  if (slow.length === 0) return;
  process.stdout.write('\nslowest suites (wall time, hooks included):\n');
  for (const [title, ms] of slow) process.stdout.write(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${title}\n`);
}

// Under scripts/run-tests.js (KEEPER_TEST_REPORT names a file) the counts, the suites' times and each
// file's time go to that file: the runner sums its lanes, prints one slowest-suites list and one
// closing line, and keeps the file times to balance the next run's lanes. Run by mocha directly, the
// reporter prints them itself.
class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const { EVENT_SUITE_BEGIN, EVENT_SUITE_END } = Mocha.Runner.constants;
    const started = new Map();
    const times = new Map();
    const files = {};
    const topLevel = (suite) => suite.parent && suite.parent.root;
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (topLevel(suite)) started.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      if (!started.has(suite)) return;
      const ms = Date.now() - started.get(suite);
      times.set(suite.title, (times.get(suite.title) || 0) + ms);
      if (suite.file) {
        const f = require('node:path').relative(process.cwd(), suite.file).split(require('node:path').sep).join('/');
        files[f] = (files[f] || 0) + ms;
      }
    });
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const s = runner.stats || { passes: 0, failures: 0, pending: 0 };
      process.nextTick(() => {
        reportLeftovers();
        const out = process.env.KEEPER_TEST_REPORT;
        if (out) {
          const report = { passes: s.passes, failures: s.failures, suites: [...times], files };
          require('node:fs').writeFileSync(out, JSON.stringify(report));
          return;
        }
        reportSlowest(times);
        process.stdout.write(`\n${s.passes} passed, ${s.failures} failed\n`);
      });
    });
  }
}
module.exports = SummaryReporter;
module.exports.reportSlowest = reportSlowest;
