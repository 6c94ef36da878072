// Every error an activity throws names the keeper that ran it (issue 33). Keepers of one cluster
// share a task queue, so any of them may run any run's render or routing; when one of them cannot
// do what the others can (a source only it cannot read, a secret its role may not see), an error
// that does not say which keeper failed sends the operator to the wrong machine. Wrapped once where
// the worker registers the activities (runs/worker.ts), so no activity can forget it.
import path from 'node:path';
import { CancelledFailure } from '@temporalio/common';

/** Where this keeper is installed (this file is <root>/dist/runs/activities/keeper-errors.js). */
const INSTALL_ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * A stack's frames without the keeper host's absolute paths: Temporal stores an activity's stack in
 * the workflow history, which every reader of the namespace sees, and the install folder (a home
 * directory, a user name) is nothing a reader needs. Frames under the install root become relative
 * to it (`dist/runs/activities/render.js:12:3`); any other absolute path keeps its file name only.
 * Only `at` lines are touched: the message, the part an operator reads, stays as it was.
 */
export function relativeStack(stack: string, root = INSTALL_ROOT): string {
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return stack
    .split('\n')
    .map((line) => {
      if (!/^\s+at /.test(line)) return line;
      return line
        .replaceAll(`file://${prefix}`, '')
        .replaceAll(prefix, '')
        .replace(/(?<=[\s(])(?:file:\/\/)?\/(?:[^\s():/]+\/)+([^\s():/]+)/g, '<host>/$1');
    })
    .join('\n');
}

/** `err` and its causes with relative stacks (a cause's stack is stored in the history too). */
function relativiseStacks(err: Error): void {
  const seen = new Set<unknown>();
  for (let e: unknown = err; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    if (typeof e.stack === 'string') e.stack = relativeStack(e.stack);
  }
}

/** The words appended to a message; also how a message already naming the keeper is recognised. */
export const keeperSuffix = (kid: string): string => ` (on keeper ${kid})`;

/**
 * The same error, its message ending with the keeper's kid and its stack free of the host's
 * absolute paths (relativeStack). The error object is kept (its class,
 * failure type, retryability and details are what the workflow decides on); only its message grows.
 * A cancellation is passed as it is: it is Temporal's own signal, not an error of this keeper.
 */
export function namingKeeper(err: unknown, kid: string): unknown {
  if (err instanceof CancelledFailure) return err;
  if (err instanceof Error) {
    if (!err.message.endsWith(keeperSuffix(kid))) err.message += keeperSuffix(kid);
    relativiseStacks(err);
    return err;
  }
  const wrapped = new Error(`${String(err)}${keeperSuffix(kid)}`);
  relativiseStacks(wrapped);
  return wrapped;
}

type Activities = Record<string, (...args: any[]) => Promise<unknown>>;

/** `activities` with every function's thrown errors naming `kid` (results and arguments untouched). */
export function withKeeperErrors<T extends Activities>(kid: string, activities: T): T {
  const out: Activities = {};
  for (const [name, fn] of Object.entries(activities)) {
    out[name] = async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        throw namingKeeper(err, kid);
      }
    };
  }
  return out as T;
}
