// A plan (docs/plans.md) = one workflow, id = plan_id. Render exactly as a run would (the same
// activity, the same stored per-host steps), then send every targeted host its steps in check mode:
// the state modules read and compare and change nothing, the ledger is not touched, and what each
// step would change is stored beside the plan. No lock is taken, nothing is committed, the
// incarnation's status never moves. `serial:` does not apply: nothing changes, so all hosts are
// checked at once.
import { proxyActivities } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/shared';
import { dispatchBatch } from './dispatch-batch';
import { renderFailedReason } from './render-failed';
import type { PlanResult, PlanWorkflowInput } from '../messages';

const shared = proxyActivities<SharedActivities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 10, nonRetryableErrorTypes: ['RunGone'] },
});

export async function incarnationPlan(input: PlanWorkflowInput): Promise<PlanResult> {
  const applyId = input.planId;
  const render = await shared.renderRun({ applyId });
  if (!render.ok) return shared.finishPlan({ applyId, reason: renderFailedReason(render) });
  if (render.sids.length > 0) await dispatchBatch(shared, { applyId, sids: render.sids, batch: 1 });
  return shared.finishPlan({ applyId });
}
