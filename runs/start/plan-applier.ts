// What drift repair (runs/activities/drift.ts) needs of the run service: applying a plan, as an
// operator would. Its own file, below both, so the activities name the run service's operation
// without importing the service, which reaches the activities through the start saga.
import type { RunOutcome } from './outcome';

export interface ApplyPlanRequest {
  name: string;
  planId: string;
  by: string;
}

export interface PlanApplier {
  applyPlan(req: ApplyPlanRequest): Promise<RunOutcome>;
}
