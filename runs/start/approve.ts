// An operator's approval of a run waiting at a gate (docs/runs.md "Gates between batches"):
// POST /v1/incarnations/{name}/runs/{apply_id}/approve, `keeperctl incarnations approve`, MCP
// `approve-run`. The wait itself is in the run's workflow (runs/workflows/gate.ts); this sends it the
// approve signal for the batch the run records it waits after, so an approval meant for one wait
// never lets a later one through. A run that does not wait for approval is a conflict: nothing sent.
import { WorkflowNotFoundError } from '@temporalio/common';
import { LEGACY_CLAIM } from '../../db/repos/run-lock';
import { getRun, type RunRecord } from '../../db/repos/runs';
import { runWaiting } from '../../db/repos/run-waiting';
import { APPROVE_SIGNAL } from '../messages';
import { temporalOf, type RunServiceDeps } from './context';
import { refuse } from './outcome';

export interface Approved {
  apply_id: string;
  incarnation: string;
  /** The batch after which the run waited; the next one starts now. */
  batch: number;
  /** How long the run waited for approval, in ms. */
  waited_ms: number;
}

export async function approve(deps: RunServiceDeps, req: { name: string; applyId: string }): Promise<Approved> {
  const run = await getRun(deps.db, req.applyId);
  if (!run || run.incarnation !== req.name) throw refuse.notFound(`incarnation ${req.name} has no run ${req.applyId}`);
  const waiting = await runWaiting(deps.db, req.applyId);
  if (!waiting || waiting.for !== 'approval') {
    const now =
      run.status !== 'running'
        ? `it has ended (${run.status})`
        : waiting
          ? `it waits for its health check after batch ${waiting.batch}, not for approval`
          : 'it is not waiting at a gate';
    throw refuse.conflict(`run ${req.applyId} is not waiting for approval: ${now}`);
  }
  await signalRun(deps, run, APPROVE_SIGNAL, { batch: waiting.batch });
  return {
    apply_id: req.applyId,
    incarnation: req.name,
    batch: waiting.batch,
    waited_ms: Math.max(0, Date.now() - Date.parse(waiting.since)),
  };
}

/**
 * Signals the workflow execution that owns the run (the apply_id fence, db/repos/run-lock.ts), not
 * any other of its id. An execution already closed (ended, or cancelled in Temporal, before the run
 * watch recorded it) is a conflict: nothing is sent.
 */
export async function signalRun(deps: RunServiceDeps, run: RunRecord, signal: string, arg: object): Promise<void> {
  const t = temporalOf(deps);
  const owner = (run as { workflow_run_id?: string | null }).workflow_run_id;
  const runId = owner && owner !== LEGACY_CLAIM ? owner : undefined;
  try {
    await t.client!.workflow.getHandle(run.apply_id, runId).signal(signal, arg);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    throw refuse.conflict(`run ${run.apply_id} has ended in the workflow engine; its report follows shortly`);
  }
}
