// The execution fence (issue 45 M-2), the executions' counterpart of the runs' apply_id fence
// (runs/activities/fence.ts): every activity of an execution workflow first checks that the asking
// workflow is the execution's own (its workflow id `execution-<id>` and the Temporal run id the API
// recorded when it started it), that the execution is still running, and that every host it names is
// in the execution's recorded selection. Who asks is taken from what Temporal tells the activity (its
// info), never from the input, which whoever started the workflow chose. Refused: ForeignExecution,
// not retried, before any host is contacted or any answer written.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Knex } from 'knex';
import { claimExecutionWorkflow, getExecution, type ExecutionRecord } from '../../db/repos/executions';
import { executionWorkflowId } from '../execution-orphans';

export function ForeignExecution(reason: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(reason, 'ForeignExecution');
}

/**
 * The execution record when the asking workflow may act for it; else throws ForeignExecution.
 * `finished: 'allow'`: the closing activity of the execution's own workflow may run again after the
 * execution is done (a retry of finishExecution); nothing else may act for a finished execution.
 */
export async function fenceExecution(
  db: Knex,
  executionId: string,
  sids: readonly string[],
  opts: { finished?: 'allow' | 'refuse' } = {},
): Promise<ExecutionRecord> {
  const exec = Context.current().info.workflowExecution;
  if (!exec) throw ForeignExecution(`execution ${executionId}: an activity outside a workflow may not act for it`);
  const e = await getExecution(db, executionId);
  if (!e) throw ForeignExecution(`execution ${executionId} does not exist`);
  const own = executionWorkflowId(executionId);
  if (exec.workflowId !== own)
    throw ForeignExecution(
      `workflow ${exec.workflowId} is not execution ${executionId}'s workflow (${own}); executions are started through the keeper's API only`,
    );
  const recorded = await claimExecutionWorkflow(db, executionId, exec.runId);
  if (recorded !== exec.runId)
    throw ForeignExecution(
      recorded === null
        ? `execution ${executionId} has already ended; workflow run ${exec.runId} may not act for it`
        : `execution ${executionId} belongs to workflow run ${recorded}; run ${exec.runId} of the same workflow id was started by someone else and may not act for it`,
    );
  if (e.status !== 'running' && opts.finished !== 'allow')
    throw ForeignExecution(`execution ${executionId} has already ended; nothing more is sent for it`);
  const selected = new Set(e.sids);
  const outside = sids.filter((s) => !selected.has(s));
  if (outside.length > 0)
    throw ForeignExecution(
      `host ${outside[0]}${outside.length > 1 ? ` (and ${outside.length - 1} more)` : ''} is not in execution ${executionId}'s selection; nothing was sent`,
    );
  return e;
}
