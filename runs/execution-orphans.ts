// An execution whose workflow is gone (terminated or failed in Temporal, its history deleted, never
// started because the keeper died between recording it and starting it) would stay `running` and
// hold one of its operator's slots forever. The run watch (runs/converge.ts, every 2 s) and, before
// refusing an operator as busy, the front door look at the workflow of running executions and close
// those that can no longer answer: every host without an answer becomes `unknown` (silence is never
// success), then the summary. Two keepers closing one at once write it once (first answer wins).
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { finishExecution, runningExecutionsOf } from '../db/repos/executions';

// The row is written just before its workflow starts: a workflow not found that young may be starting.
const NOT_FOUND_GRACE_MS = 60_000;

export const executionWorkflowId = (id: string) => `execution-${id}`;

/** Closes the running executions (of one operator, or all) whose workflow is no longer running; answers their ids. */
export async function closeOrphanedExecutions(db: Knex, client: Client, aid?: string): Promise<string[]> {
  const closed: string[] = [];
  for (const row of await runningExecutionsOf(db, aid)) {
    let reason: string;
    try {
      const d = await client.workflow.getHandle(executionWorkflowId(row.id)).describe();
      if (d.status.name === 'RUNNING') continue;
      reason = `the execution's workflow ended in Temporal (${d.status.name.toLowerCase()}) before this host answered`;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      if (Date.now() - row.created_at.getTime() < NOT_FOUND_GRACE_MS) continue;
      reason = "the execution's workflow does not exist in Temporal";
    }
    await finishExecution(db, row.id, `${reason}; whether the module ran on this host is not known`);
    closed.push(row.id);
  }
  return closed;
}
