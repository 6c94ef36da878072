// Every error an activity throws names the keeper that ran it (issue 33). Keepers of one cluster
// share a task queue, so any of them may run any run's render or routing; when one of them cannot
// do what the others can (a source only it cannot read, a secret its role may not see), an error
// that does not say which keeper failed sends the operator to the wrong machine. Wrapped once where
// the worker registers the activities (runs/worker.ts), so no activity can forget it.
import { CancelledFailure } from '@temporalio/common';

/** The words appended to a message; also how a message already naming the keeper is recognised. */
export const keeperSuffix = (kid: string): string => ` (on keeper ${kid})`;

/**
 * The same error, its message ending with the keeper's kid. The error object is kept (its class,
 * failure type, retryability and details are what the workflow decides on); only its message grows.
 * A cancellation is passed as it is: it is Temporal's own signal, not an error of this keeper.
 */
export function namingKeeper(err: unknown, kid: string): unknown {
  if (err instanceof CancelledFailure) return err;
  if (err instanceof Error) {
    if (!err.message.endsWith(keeperSuffix(kid))) err.message += keeperSuffix(kid);
    return err;
  }
  return new Error(`${String(err)}${keeperSuffix(kid)}`);
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
