// An operator's cancel of a run waiting at a gate (docs/runs.md "Cancelling a waiting run"):
// POST /v1/incarnations/{name}/runs/{apply_id}/cancel, `keeperctl incarnations cancel`, MCP
// `cancel-run`. This sends the run's workflow the cancel signal naming the operator; the workflow
// stops at its gate (runs/workflows/gate.ts): nothing more is dispatched, the hosts done so far stay
// in the report, the rest are `skipped`, nothing is committed and the run ends `error_locked` with
// "cancelled by <AID> ...". Only a waiting run is cancelled: a batch being dispatched is never cut
// in the middle, so a run not waiting is a conflict and nothing is sent.
import { getRun } from '../../db/repos/runs';
import { runWaiting } from '../../db/repos/run-waiting';
import { CANCEL_SIGNAL } from '../messages';
import { signalRun } from './approve';
import type { RunServiceDeps } from './context';
import { refuse } from './outcome';

export interface Cancelled {
  apply_id: string;
  incarnation: string;
  /** The batch after which the run waited; no later batch starts. */
  batch: number;
  /** What it waited for when cancelled. */
  waited_for: 'health' | 'approval';
  /** The run report, which shows it `failed` once the workflow has closed it. */
  run: string;
}

export async function cancel(
  deps: RunServiceDeps,
  req: { name: string; applyId: string; by: string },
): Promise<Cancelled> {
  const run = await getRun(deps.db, req.applyId);
  if (!run || run.incarnation !== req.name) throw refuse.notFound(`incarnation ${req.name} has no run ${req.applyId}`);
  const waiting = await runWaiting(deps.db, req.applyId);
  if (!waiting) {
    const now =
      run.status !== 'running'
        ? `it has ended (${run.status})`
        : 'it is not waiting at a gate, and a batch is never cut in the middle';
    throw refuse.conflict(`run ${req.applyId} cannot be cancelled: ${now}`);
  }
  await signalRun(deps, run, CANCEL_SIGNAL, { by: req.by });
  return {
    apply_id: req.applyId,
    incarnation: req.name,
    batch: waiting.batch,
    waited_for: waiting.for,
    run: `/v1/incarnations/${req.name}/runs/${req.applyId}`,
  };
}
