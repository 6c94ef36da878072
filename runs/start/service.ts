// The one place a run begins (issue 32). Every starter calls this service: the API routes (and MCP
// through them), the converger (runs/converge.ts) and drift repair (runs/activities/drift.ts).
// Each operation answers a RunOutcome: accepted with the run's ids, or refused with the kind, the
// field and the reason, with nothing recorded. The saga behind every operation is in operations.ts,
// plans.ts and plan-apply.ts; launch.ts records the workflow or compensates when Temporal refuses.
import type { Knex } from 'knex';
import type { IncarnationRecord } from '../../db/repos/incarnations';
import type { ServiceRecord } from '../../db/repos/services';
import { loadSerialized } from './checks';
import { uiLink, type RunServiceDeps } from './context';
import * as ops from './operations';
import { outcomeOf, type RunOutcome } from './outcome';
import { applyPlan } from './plan-apply';
import type { ApplyPlanRequest } from './plan-applier';
import { approve } from './approve';
import { cancel } from './cancel';
import { plan, type PlanRequest } from './plans';
import { updateHostInput } from './host-input';
import type { HostInput } from '../../scenario/host-input';
import { checkedLoad, mustIncarnation, publishChecked, refuseYanked } from './source';

export type { RunServiceDeps } from './context';
export type { RunAccepted, RunOutcome, RunRefused, RefusalKind, FieldProblem } from './outcome';
export { Refusal, refusedOf } from './outcome';

export function createRunService(deps: RunServiceDeps) {
  return {
    create: (req: ops.CreateRequest): Promise<RunOutcome> => outcomeOf(() => ops.create(deps, req)),
    run: (req: ops.RunRequest): Promise<RunOutcome> => outcomeOf(() => ops.run(deps, req)),
    plan: (req: PlanRequest): Promise<RunOutcome> => outcomeOf(() => plan(deps, req)),
    applyPlan: (req: ApplyPlanRequest): Promise<RunOutcome> =>
      outcomeOf(() => applyPlan(deps, req.name, req.planId, req.by)),
    upgrade: (req: ops.UpgradeRequest): Promise<RunOutcome> => outcomeOf(() => ops.upgrade(deps, req)),
    retry: (req: ops.RetryRequest): Promise<RunOutcome> => outcomeOf(() => ops.retry(deps, req)),
    delete: (req: {
      name: string;
      by: string;
      beforeLock?: (inc: IncarnationRecord) => Promise<void>;
    }): Promise<RunOutcome> => outcomeOf(() => ops.destroy(deps, req)),
    /** Approves a run waiting at a gate (runs/start/approve.ts); throws a Refusal (409 when not waiting). */
    approve: (req: { name: string; applyId: string }) => approve(deps, req),
    /** Cancels a run waiting at a gate (runs/start/cancel.ts); throws a Refusal (409 when not waiting). */
    cancel: (req: { name: string; applyId: string; by: string }) => cancel(deps, req),
    converge: (req: ops.ConvergeRequest): Promise<RunOutcome> => outcomeOf(() => ops.converge(deps, req)),

    // What the catalog and the readers share with run starts; these throw a Refusal (the API maps it).
    /** Replaces an incarnation's per-host input after checking it (runs/start/host-input.ts); throws a Refusal. */
    setHostInput: (req: { name: string; hostInput: HostInput | null }) =>
      updateHostInput(deps, req.name, req.hostInput),
    /** The incarnation, or not_found naming when a deleted one had the name. */
    incarnation: (name: string) => mustIncarnation(deps, name),
    /** Loads a ref and lints it (registration, publishing); unprocessable naming `field` when unusable. */
    checkedLoad: (
      service: Pick<ServiceRecord, 'name' | 'git' | 'credential_ref'>,
      ref: string,
      field: string,
      gitField?: string,
    ) => checkedLoad(deps, service, ref, field, gitField),
    /** Resolves, checks and pins a ref as a published version (in `db`, a transaction when the caller has one). */
    publishChecked: (
      db: Knex | Knex.Transaction,
      service: Pick<ServiceRecord, 'name' | 'git' | 'credential_ref'>,
      ref: string,
      field: string,
      by?: string,
    ) => publishChecked(deps, db, service, ref, field, by),
    /** Loads a ref the way run starts do (one fetch per repository at a time); errors as thrown. */
    load: (service: Pick<ServiceRecord, 'git' | 'ref' | 'credential_ref'>, ref?: string) =>
      loadSerialized(deps, service, ref),
    refuseYanked,
    /** The run's page in the Temporal Web UI. */
    uiLink: (applyId: string) => uiLink(deps, applyId),
    /** The Temporal client, for what is not a run start (drift schedules, the run watch); absent when not connected. */
    temporal: deps.temporal,
  };
}

export type RunService = ReturnType<typeof createRunService>;
