// One drift check of one incarnation (docs/drift.md), started by the incarnation's Temporal
// Schedule (runs/drift-schedule.ts): plan the last committed operation with its last committed
// input (a child incarnationPlan, id = plan_id), record per host whether it still matches, and,
// when the incarnation asks for it, apply that plan exactly (the beginRepair activity applies it
// through the run service, which starts the run's own workflow, id = apply_id, as for an operator's
// apply: it outlives this check). A check that finds the incarnation busy or locked does nothing; the next tick
// looks again.
import { executeChild, proxyActivities } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/shared';
import { incarnationPlan } from './plan';

const shared = proxyActivities<SharedActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 5 },
});

export interface DriftCheckInput {
  incarnation: string;
}
export interface DriftCheckResult {
  skipped?: string;
  planId?: string;
  drifted?: string[];
  repairApplyId?: string;
}

export async function incarnationDriftCheck(input: DriftCheckInput): Promise<DriftCheckResult> {
  const begin = await shared.beginDriftCheck({ incarnation: input.incarnation });
  if ('skip' in begin) return { skipped: begin.skip };
  const { planId, operation } = begin;
  await executeChild(incarnationPlan, {
    workflowId: planId,
    args: [{ planId, incarnation: input.incarnation, operation }],
  });
  const outcome = await shared.recordDrift({ incarnation: input.incarnation, planId });
  if (!outcome.repair) return { planId, drifted: outcome.drifted };
  const repair = await shared.beginRepair({ incarnation: input.incarnation, planId });
  if (!repair) return { planId, drifted: outcome.drifted };
  return { planId, drifted: outcome.drifted, repairApplyId: repair.applyId };
}
