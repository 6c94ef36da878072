// The workflow bundle, built once per process: webpack-bundling the workflows costs seconds of CPU,
// and a keeper (or a test process running several keepers) needs it only once.
import path from 'node:path';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** The compiled workflows entry point (dist/runs/workflows/index.js beside this file). */
export const WORKFLOWS_PATH = path.join(__dirname, 'workflows', 'index.js');

export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger }).catch((err) => {
    bundle = undefined;
    throw err;
  });
  return bundle;
}

// The bundler logs every module at info; only problems are worth a line in the keeper's log.
const noop = () => undefined;
const quietLogger = {
  log: noop, trace: noop, debug: noop, info: noop,
  warn: (message: string) => process.stderr.write(`temporal bundler: ${message}\n`),
  error: (message: string) => process.stderr.write(`temporal bundler: ${message}\n`),
};
