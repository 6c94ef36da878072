// The workflow bundle, built once per process: webpack-bundling the workflows costs seconds of CPU
// (minutes on a loaded 2-core host), and a keeper (or a test process running several keepers)
// needs it only once. The keeper package ships it prebuilt beside this file (packaging/stage.js),
// so an installed keeper starts without bundling. A checkout's `make build` prebuilds one too
// (scripts/build-workflow-bundle.js), in a file of its own with a manifest of what it was made from:
// a keeper started from a checkout uses it only while every compiled workflow file and the npm
// lockfile are the ones it was made from, and bundles at start otherwise (say after a bare
// `npx tsc`), so a stale bundle never runs. Measured at load 25 on two cores: 53 s of bundling at
// each keeper start, against reading a file.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

let bundle: Promise<{ code: string }> | undefined;

/** Written by the package build from exactly the workflows it ships; absent in a checkout. */
export const PREBUILT_BUNDLE = path.join(__dirname, 'workflow-bundle.js');
/** A checkout's bundle (`make build`), used only while CHECKOUT_MANIFEST names its inputs' digest. */
export const CHECKOUT_BUNDLE = path.join(__dirname, 'workflow-bundle.checkout.js');
export const CHECKOUT_MANIFEST = path.join(__dirname, 'workflow-bundle.checkout.json');

/** The compiled workflows entry point (dist/runs/workflows/index.js beside this file). */
export const WORKFLOWS_PATH = path.join(__dirname, 'workflows', 'index.js');

/** The checkout's lockfile: the npm packages bundled with the workflows (@temporalio/workflow and its own). */
const LOCKFILE = path.join(__dirname, '..', '..', 'package-lock.json');

/** Bundles the workflows for the package build (packaging/stage.js writes the code to PREBUILT_BUNDLE). */
export async function buildWorkflowBundle(): Promise<string> {
  return (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger })).code;
}

/**
 * One digest of what the bundle is made from: every compiled file reachable from the workflows'
 * entry point by a relative require (webpack follows the same requires), with its path, and the
 * lockfile for the npm packages it pulls in. Reading them takes milliseconds.
 */
export function workflowSourcesDigest(entry = WORKFLOWS_PATH, lockfile = LOCKFILE): string {
  const h = createHash('sha256');
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/require\("(\.{1,2}\/[^"]*)"\)/g)) {
      const base = path.resolve(path.dirname(file), m[1]!);
      const found = [base, `${base}.js`, path.join(base, 'index.js')].find(
        (p) => fs.existsSync(p) && fs.statSync(p).isFile(),
      );
      if (found) todo.push(found);
    }
  }
  for (const file of [...seen].sort()) {
    h.update(`${path.relative(path.dirname(entry), file)}\0`);
    h.update(fs.readFileSync(file));
    h.update('\0');
  }
  h.update(fs.existsSync(lockfile) ? fs.readFileSync(lockfile) : 'no lockfile');
  return h.digest('hex');
}

/** Whether the checkout's bundle was made from the files there now (no manifest: never, a build was cut short). */
export function checkoutBundleIsCurrent(
  at = { bundle: CHECKOUT_BUNDLE, manifest: CHECKOUT_MANIFEST, entry: WORKFLOWS_PATH, lockfile: LOCKFILE },
): boolean {
  try {
    if (!fs.existsSync(at.bundle)) return false;
    const m = JSON.parse(fs.readFileSync(at.manifest, 'utf8')) as { digest?: unknown };
    return m.digest === workflowSourcesDigest(at.entry, at.lockfile);
  } catch {
    return false;
  }
}

export function workflowBundle(): Promise<{ code: string }> {
  if (!bundle && fs.existsSync(PREBUILT_BUNDLE))
    bundle = fs.promises.readFile(PREBUILT_BUNDLE, 'utf8').then((code) => ({ code }));
  if (!bundle && checkoutBundleIsCurrent())
    bundle = fs.promises.readFile(CHECKOUT_BUNDLE, 'utf8').then((code) => ({ code }));
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger }).catch((err) => {
    bundle = undefined;
    throw err;
  });
  return bundle;
}

// The bundler logs every module at info; only problems are worth a line in the keeper's log.
const noop = () => undefined;
const quietLogger = {
  log: noop,
  trace: noop,
  debug: noop,
  info: noop,
  warn: (message: string) => process.stderr.write(`temporal bundler: ${message}\n`),
  error: (message: string) => process.stderr.write(`temporal bundler: ${message}\n`),
};
