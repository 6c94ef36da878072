// jsonfile: top-level keys of a JSON settings file. State: present {path, settings, mode?}: each key
// of `settings` is set to its value; other keys of the file are kept. Run by the soul with its own
// Node.js (module.yml `runtime: node`), in /, with only Node's built-in modules. The params are read
// from the file named by KEEPER_PARAMS_FILE (the same object as on stdin; a param holding a secret
// is there, never in the environment). The diff names the keys that change, never their values,
// so a setting from the secrets store stays out of plans and reports (docs/state-modules.md).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const answer = (a) => process.stdout.write(`${JSON.stringify(a)}\n`);

function main() {
  const { state, params, dry_run: dryRun } = JSON.parse(fs.readFileSync(process.env.KEEPER_PARAMS_FILE, 'utf8'));
  if (state !== 'present') {
    process.stderr.write(`jsonfile: unknown state ${state}\n`);
    process.exit(2);
  }
  const mode = parseInt(params.mode ?? '0644', 8);
  let text;
  try {
    text = fs.readFileSync(params.path, 'utf8');
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  let current = {};
  if (text !== undefined) {
    try {
      current = JSON.parse(text);
    } catch (err) {
      // Not ours to overwrite: say so and fail the step.
      answer({ changed: false, output: `${params.path} is not JSON (${err.message}); nothing was changed` });
      process.exit(1);
    }
  }
  const changed = Object.keys(params.settings).filter(
    (k) => JSON.stringify(current[k]) !== JSON.stringify(params.settings[k]),
  );
  const modeChanged = text !== undefined && (fs.statSync(params.path).mode & 0o777) !== mode;
  if (changed.length === 0 && !modeChanged) {
    answer({ changed: false, output: `${params.path} holds its settings` });
    return;
  }
  const diff = { path: params.path, keys: changed, ...(text === undefined ? { created: true } : {}) };
  if (modeChanged) diff.mode = { to: params.mode ?? '0644' };
  const what = `${changed.length ? `${changed.join(', ')} in ` : ''}${params.path}${modeChanged ? ' (mode)' : ''}`;
  if (dryRun) {
    answer({ changed: true, output: `would set ${what}`, diff });
    return;
  }
  // Written beside and renamed over: a reader never sees half a file.
  const tmp = path.join(path.dirname(params.path), `.${path.basename(params.path)}.${process.pid}`);
  fs.writeFileSync(tmp, `${JSON.stringify({ ...current, ...params.settings }, null, 2)}\n`, { mode });
  fs.chmodSync(tmp, mode);
  fs.renameSync(tmp, params.path);
  answer({ changed: true, output: `set ${what}`, diff });
}

main();
