// Activity failures the workflows must not retry.
import { ApplicationFailure } from '@temporalio/common';

/** The run's row is gone (its incarnation was deleted): retrying cannot help. */
export function RunGone(applyId: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`run ${applyId} no longer exists`, 'RunGone');
}

/** A state migration failed or is not forward: the incarnation is locked, its state unchanged. */
export function MigrationFailed(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, 'MigrationFailed');
}

/** The run does not hold its incarnation's lock (a workflow not started by the API): refuse, change nothing. */
export function NotLockHolder(reason: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(reason, 'NotLockHolder');
}
