// The workflow bundle, built once per process: webpack-bundling the workflows costs seconds of CPU
// (minutes on a loaded 2-core host), and a keeper (or a test process running several keepers)
// needs it only once. The keeper package ships it prebuilt beside this file (packaging/stage.js),
// so an installed keeper starts without bundling; a checkout bundles at start.
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

let bundle: Promise<{ code: string }> | undefined;

/** Written by the package build from exactly the workflows it ships; absent in a checkout. */
export const PREBUILT_BUNDLE = path.join(__dirname, 'workflow-bundle.js');

/** The compiled workflows entry point (dist/runs/workflows/index.js beside this file). */
export const WORKFLOWS_PATH = path.join(__dirname, 'workflows', 'index.js');

/** Bundles the workflows for the package build (packaging/stage.js writes the code to PREBUILT_BUNDLE). */
export async function buildWorkflowBundle(): Promise<string> {
  return (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger })).code;
}

export function workflowBundle(): Promise<{ code: string }> {
  if (!bundle && fs.existsSync(PREBUILT_BUNDLE))
    bundle = fs.promises.readFile(PREBUILT_BUNDLE, 'utf8').then((code) => ({ code }));
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
