// Runs whose workflow ended outside the keeper (issue 28, item 7). A run ends through its own
// workflow's last activity (commit, lock, finishPlan); a workflow that is terminated, times out, is
// cancelled or fails in Temporal never gets there, and its run would stay `running`, its incarnation
// `applying` until a forced delete. This sweep (called by every keeper's converge loop,
// runs/converge.ts) asks Temporal about each running run's own execution (the one the apply_id fence
// recorded, db/repos/run-lock.ts) and, when that execution is closed, locks the run with what
// Temporal says happened: `error_locked`, state untouched, the reason on the run. A plan is failed
// the same way. Two keepers sweeping at once lock the same run once (lockRun re-reads the row).
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Knex } from 'knex';
import { finishPlan } from '../db/repos/plans';
import { LEGACY_CLAIM } from '../db/repos/run-lock';
import { lockRun, RunMissing } from '../db/repos/run-outcome';

/** Runs looked at per sweep, the longest-running first. */
const RUNS_PER_SWEEP = 200;
/** A run whose workflow Temporal does not know is locked only after this long: the API records a
 *  run just before it starts its workflow, and fails the run itself when the start fails. */
export const NOT_FOUND_GRACE_MS = 60_000;

/** The phase recorded on a run locked by the sweep (summary.failed_phase). */
export const WORKFLOW_PHASE = 'workflow';

interface RunningRow {
  apply_id: string;
  kind: 'run' | 'plan';
  workflow_run_id: string | null;
  created_at: Date;
}

/** Text from whoever terminated the workflow, kept short and printable before it is stored. */
function clean(text: string | null | undefined): string {
  const t = (text ?? '').replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return t.length > 200 ? `${t.slice(0, 200)}...` : t;
}

/** Why the execution closed, from its last history event. */
async function closeReason(
  client: Client,
  namespace: string,
  workflowId: string,
  runId: string,
  status: string,
): Promise<string> {
  const last = (
    await client.workflowService.getWorkflowExecutionHistoryReverse({
      namespace,
      execution: { workflowId, runId },
      maximumPageSize: 1,
    })
  ).history?.events?.[0];
  const by = (identity: string | null | undefined) => (identity ? ` by ${clean(identity)}` : '');
  const terminated = last?.workflowExecutionTerminatedEventAttributes;
  if (terminated)
    return `the run's workflow was terminated in Temporal${by(terminated.identity)}${terminated.reason ? `: ${clean(terminated.reason)}` : ''}`;
  if (last?.workflowExecutionTimedOutEventAttributes) return "the run's workflow timed out in Temporal";
  const failed = last?.workflowExecutionFailedEventAttributes;
  if (failed) return `the run's workflow failed in Temporal: ${clean(failed.failure?.message) || 'no message'}`;
  if (last?.workflowExecutionCanceledEventAttributes) return "the run's workflow was cancelled in Temporal";
  return `the run's workflow ended in Temporal (${status.toLowerCase()}) without ending the run`;
}

/** One look at every running run; answers the apply_ids it ended. */
export async function endOrphanedRuns(db: Knex, client: Client, namespace: string): Promise<string[]> {
  const rows: RunningRow[] = await db('incarnation_runs')
    .where({ status: 'running' })
    .orderBy('created_at')
    .limit(RUNS_PER_SWEEP)
    .select('apply_id', 'kind', 'workflow_run_id', 'created_at');
  const ended: string[] = [];
  for (const row of rows) {
    // The execution that owns the run; not yet known (legacy or unclaimed): the latest of its id.
    const runId = row.workflow_run_id && row.workflow_run_id !== LEGACY_CLAIM ? row.workflow_run_id : undefined;
    let reason: string;
    try {
      const d = await client.workflow.getHandle(row.apply_id, runId).describe();
      if (d.status.name === 'RUNNING') continue;
      reason = await closeReason(client, namespace, row.apply_id, d.runId, d.status.name);
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      if (Date.now() - row.created_at.getTime() < NOT_FOUND_GRACE_MS) continue;
      reason = "the run's workflow does not exist in Temporal";
    }
    reason = `${reason}; the run ended without committing`;
    try {
      if (row.kind === 'plan') await finishPlan(db, row.apply_id, reason);
      else await lockRun(db, row.apply_id, reason, WORKFLOW_PHASE);
    } catch (err) {
      if (!(err instanceof RunMissing)) throw err; // deleted meanwhile: nothing to end
    }
    ended.push(row.apply_id);
  }
  return ended;
}
