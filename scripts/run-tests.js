#!/usr/bin/env node
// Runs the compiled test suite with mocha. `--unit` runs only the tests beside the code (no stack);
// the default runs everything, integration tests under test/ included (they need `make stack`).
//
// Most of a full run's wall time is waiting (on keepers, souls, Temporal), not CPU, so the files run
// in KEEPER_TEST_JOBS mocha processes side by side when asked (default 1: one process, as before;
// two lanes ran 27 min against 37, but in one of the two full two-lane runs runs/crash.test's run did
// not settle within 120 s after its keeper's restart, not seen in one process). The suites that boot systemd or Debian roots, build packages, kill or cut the stack's
// dependencies, rehearse production or soak (SERIAL below) share one lane and never run beside each
// other; every other file goes to the lane with the least work so far, longest first, by the
// durations the last runs recorded (.stack/test-durations.json; a file never timed counts by size).
// Each lane's lines are prefixed with its number; the run ends with one slowest-suites list and one
// closing line `N passed, N failed` over all lanes (CI reads that line).
'use strict';
const { spawn } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const readline = require('node:readline');
const { reportSlowest } = require('./mocha-summary-reporter.js');

const root = path.resolve(__dirname, '..');
const unitOnly = process.argv.includes('--unit');
const extra = process.argv.slice(2).filter((a) => a !== '--unit');
if (!fs.existsSync(path.join(root, 'dist'))) {
  console.error('run-tests: dist/ is missing; run `npm run build` first');
  process.exit(2);
}
const jobsEnv = process.env.KEEPER_TEST_JOBS ?? '1';
const JOBS = Number(jobsEnv);
if (!Number.isInteger(JOBS) || JOBS < 1 || JOBS > 8) {
  console.error(`run-tests: KEEPER_TEST_JOBS must be a whole number from 1 to 8, got ${JSON.stringify(jobsEnv)}`);
  process.exit(2);
}

function walk(dir, found, skip = () => false) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!skip(p)) walk(p, found, skip);
    } else if (e.name.endsWith('.test.js')) found.push(path.relative(root, p));
  }
  return found;
}
// The unit tests are found, not listed: every *.test.js beside the code, under any top folder of
// dist/ except test/ (the integration tests) and ui-app/ (the bundled web UI), so a new folder's
// tests (proto/, cli/, bench/) run without anyone editing this file.
function unitTests() {
  const found = [];
  for (const e of fs.readdirSync(path.join(root, 'dist'), { withFileTypes: true })) {
    if (e.isDirectory() && e.name !== 'test' && e.name !== 'ui-app' && e.name !== 'node_modules')
      walk(path.join(root, 'dist', e.name), found);
  }
  return found.sort();
}
/** The files a pattern names (`*` within a folder, `**` across folders), or the argument itself. */
function expand(arg) {
  if (!/[*?]/.test(arg)) return [path.relative(root, path.resolve(root, arg)).split(path.sep).join('/')];
  const rel = path.relative(root, path.resolve(root, arg)).split(path.sep).join('/');
  const parts = rel.split('/');
  const fixed = parts.slice(0, parts.findIndex((p) => /[*?]/.test(p))).join('/');
  const re = new RegExp(
    `^${rel
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*\*\//g, '\u0000')
      .replace(/\*/g, '[^/]*')
      .replace(/\?/g, '[^/]')
      .replace(/\u0000/g, '(?:.*/)?')}$`,
  );
  const base = path.join(root, fixed);
  if (!fs.existsSync(base)) return [];
  const skip = (p) => path.basename(p) === 'node_modules' || path.relative(root, p) === path.join('dist', 'ui-app');
  return walk(base, [], skip)
    .map((f) => f.split(path.sep).join('/'))
    .filter((f) => re.test(f))
    .sort();
}
const files = [...new Set((extra.length > 0 ? extra : unitOnly ? unitTests() : ['dist/**/*.test.js']).flatMap(expand))];
if (files.length === 0) {
  console.error(`run-tests: no test files match ${extra.join(' ')}`);
  process.exit(2);
}

// The production rehearsal (test/prod/) runs with the rest: its suite builds the Temporal server from
// its Go module the first time (about 3 minutes, cached like the stack's tools), starts it on ports
// of its own and stops it again; `make test-prod` runs it alone.
// One lane, one file after another: Debian and systemd roots (one cached root tarball, built on first
// use), package builds (one after another by design, test/packages/built.ts), the production
// rehearsal, the fault suites (they stop and cut their private dependencies and time the recovery),
// the soak (it measures memory and open files) and the tool-cache checks.
const SERIAL = /^dist\/test\/(packages|prod|faults|soak|stack|modules)\//;

const durationsFile = path.join(root, '.stack', 'test-durations.json');
// The times of a full two-lane run (CI, 2026-11-29), so a clean clone balances its lanes by time,
// not by file size (by size, the production rehearsal's 556 s counted as a small file: lanes of 2075
// and 1387 s). This machine's own times, once it has run, take precedence.
const shippedDurations = path.join(__dirname, 'test-durations.json');
function readDurations() {
  const read = (f) => {
    try {
      const d = JSON.parse(fs.readFileSync(f, 'utf8'));
      return d && typeof d === 'object' ? d : {};
    } catch {
      return {};
    }
  };
  return { ...read(shippedDurations), ...read(durationsFile) };
}

/** Lanes of files: the serial files in lane 0, every other file, longest first, where least work is queued. */
function plan(list, lanes) {
  const known = readDurations();
  const size = (f) => {
    try {
      return fs.statSync(path.join(root, f)).size;
    } catch {
      return 0;
    }
  };
  // A file never timed: its size at the median milliseconds per byte of the files that were.
  const rates = list.filter((f) => known[f] > 0 && size(f) > 0).map((f) => known[f] / size(f));
  rates.sort((a, b) => a - b);
  const rate = rates.length > 0 ? rates[Math.floor(rates.length / 2)] : 1;
  const cost = (f) => (known[f] > 0 ? known[f] : size(f) * rate);
  const out = Array.from({ length: lanes }, () => ({ files: [], cost: 0 }));
  for (const f of list.filter((f) => SERIAL.test(f))) {
    out[0].files.push(f);
    out[0].cost += cost(f);
  }
  for (const f of list.filter((f) => !SERIAL.test(f)).sort((a, b) => cost(b) - cost(a))) {
    const lane = out.reduce((best, l) => (l.cost < best.cost ? l : best));
    lane.files.push(f);
    lane.cost += cost(f);
  }
  // Longest first only decides the lanes; each lane runs its files in name order, as one process did
  // before: suites that share a rig rely on it (plans-create.test before plans.test, which publishes
  // the plan service's v2).
  for (const l of out) l.files.sort();
  return out.filter((l) => l.files.length > 0);
}

// Every temp file of the run (tests, souls, git, browsers) goes under one directory of its own in the
// system temp dir, removed when the run ends, also when a test fails or the run is interrupted, so a
// run leaves nothing behind. The reporter names what tests forgot to remove, so leaks get fixed.
const runTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'keeper-test-run-'));
fs.chmodSync(runTmp, 0o1777); // like /tmp: helpers running as other users (postgres) may write here
const cleanup = () => fs.rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });

const lanes = plan(files, JOBS);
const parallel = lanes.length > 1;
const children = new Set();

function runLane(lane, i) {
  // Each lane: its own temp dir (leftovers are named per lane), its own slice of the test port range
  // (test/support/ports.ts: two processes never probe the same ports), its counts in a file of its own.
  const tmp = parallel ? path.join(runTmp, `lane-${i + 1}`) : runTmp;
  if (parallel) {
    fs.mkdirSync(tmp);
    fs.chmodSync(tmp, 0o1777);
  }
  const report = path.join(runTmp, `report-${i + 1}.json`);
  const args = [
    require.resolve('mocha/bin/mocha.js'),
    '--reporter',
    path.join(__dirname, 'mocha-summary-reporter.js'),
    '--timeout',
    '60000',
    '--exit',
    ...lane.files,
  ];
  const env = {
    ...process.env,
    TMPDIR: tmp,
    KEEPER_TEST_TMPDIR: tmp,
    KEEPER_TEST_REPORT: report,
    ...(parallel ? { KEEPER_TEST_PORT_SLICE: `${i}/${lanes.length}` } : {}),
  };
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: parallel ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    children.add(child);
    if (parallel) {
      // Whole lines only, each with its lane's number, so two lanes never interleave within a line.
      const tag = `[${i + 1}] `;
      for (const [from, to] of [
        [child.stdout, process.stdout],
        [child.stderr, process.stderr],
      ])
        readline.createInterface({ input: from, crlfDelay: Infinity }).on('line', (l) => to.write(`${tag}${l}\n`));
    }
    child.on('close', (code, signal) => {
      children.delete(child);
      let r = null;
      try {
        r = JSON.parse(fs.readFileSync(report, 'utf8'));
      } catch {
        /* mocha ended before its run ended (a file that failed to load, a crash): counted below */
      }
      resolve({ lane: i + 1, files: lane.files.length, code: code ?? 1, signal, ms: Date.now() - t0, r });
    });
  });
}

// The children get a terminal's signal too (same process group); a signal to this process alone is
// passed on. Either way: wait for them, then clean up. A mocha process can outlive SIGTERM (a test
// keeper in it handles the signal for its graceful stop), so what still runs 15 s later is killed.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
  process.on(sig, () => {
    for (const c of children) c.kill(sig);
    setTimeout(() => {
      for (const c of children) c.kill('SIGKILL');
    }, 15_000).unref();
  });

async function main() {
  const t0 = Date.now();
  if (parallel)
    process.stdout.write(
      `run-tests: ${files.length} files in ${lanes.length} lanes (KEEPER_TEST_JOBS=${JOBS}; lane 1 runs the serial suites)\n`,
    );
  const results = await Promise.all(lanes.map(runLane));
  let passes = 0;
  let failures = 0;
  const suites = [];
  const fileTimes = {};
  const notes = [];
  for (const x of results) {
    if (!x.r) {
      failures += 1;
      notes.push(`lane ${x.lane} ended without its counts (exit ${x.signal ?? x.code}): counted as 1 failure`);
      continue;
    }
    passes += x.r.passes;
    failures += x.r.failures;
    suites.push(...x.r.suites);
    Object.assign(fileTimes, x.r.files);
    if (x.code !== 0 && x.r.failures === 0) {
      failures += 1;
      notes.push(`lane ${x.lane} exited ${x.signal ?? x.code} with no failed test: counted as 1 failure`);
    }
  }
  if (Object.keys(fileTimes).length > 0) {
    try {
      fs.mkdirSync(path.dirname(durationsFile), { recursive: true });
      const merged = { ...readDurations(), ...fileTimes };
      fs.writeFileSync(`${durationsFile}.tmp`, `${JSON.stringify(merged, null, 1)}\n`);
      fs.renameSync(`${durationsFile}.tmp`, durationsFile);
    } catch {
      /* the durations only order the next run's files */
    }
  }
  if (parallel) {
    process.stdout.write('\nlanes:\n');
    for (const x of results)
      process.stdout.write(`  lane ${x.lane}: ${x.files} files, ${((x.ms) / 1000).toFixed(1)} s\n`);
    process.stdout.write(`  wall: ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  }
  for (const n of notes) process.stdout.write(`run-tests: ${n}\n`);
  reportSlowest(suites);
  process.stdout.write(`\n${passes} passed, ${failures} failed\n`);
  return failures > 0 || results.some((x) => x.code !== 0) ? 1 : 0;
}

let status = 1;
main()
  .then((s) => {
    status = s;
  })
  .catch((err) => {
    console.error(err);
  })
  .finally(() => {
    cleanup();
    process.exit(status);
  });
