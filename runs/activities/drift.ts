// The activities of a drift check (docs/drift.md; workflow runs/workflows/drift.ts). A check is a
// plan of the incarnation's last committed operation with its last committed input, made by the
// keeper itself; a host where any step would change something has drifted from the committed
// state. With auto_repair the plan is then applied exactly, as an operator would apply it: through
// the run service (runs/start/service.ts applyPlan), which records the run, takes the lock, claims
// the plan and starts the run's workflow, or refuses with nothing recorded.
import { getIncarnation } from '../../db/repos/incarnations';
import { driftedHosts, lastCommittedRun, recordDrift } from '../../db/repos/drift';
import { insertPlan } from '../../db/repos/plans';
import { getRun } from '../../db/repos/runs';
import { lastCommittedInput } from '../../db/repos/runs-carryover';
import { newApplyId } from '../apply-id';
import type { SharedActivityDeps } from './deps';

/** Who made a drift check's plan and its repair run (created_by). */
export const DRIFT_CHECKER = 'keeper:drift-check';

export function createDriftActivities(deps: SharedActivityDeps) {
  const { db } = deps;
  return {
    /** Records the check's plan; `skip` says why there is nothing to check now (the next tick looks again). */
    async beginDriftCheck({
      incarnation,
    }: {
      incarnation: string;
    }): Promise<{ planId: string; operation: string } | { skip: string }> {
      const inc = await getIncarnation(db, incarnation);
      if (!inc || inc.drift_interval === null) return { skip: `incarnation ${incarnation} has no drift check` };
      if (inc.status !== 'ready')
        return { skip: `incarnation ${incarnation} is ${inc.status}; checked at the next interval` };
      if (inc.last_committed_apply_id === null) return { skip: `incarnation ${incarnation} has nothing committed yet` };
      const last = await lastCommittedRun(db, inc.last_committed_apply_id);
      if (!last) return { skip: `incarnation ${incarnation} has no committed operation to check` };
      const planId = newApplyId(incarnation, `${last.operation}.drift`);
      await insertPlan(db, {
        applyId: planId,
        incarnation,
        operation: last.operation,
        input: (await lastCommittedInput(db, inc.last_committed_apply_id)) ?? {},
        serviceRef: inc.service_version ?? last.service_ref ?? '',
        ...(inc.service_commit ? { serviceCommit: inc.service_commit } : {}),
        createdBy: DRIFT_CHECKER,
        base: inc.last_committed_apply_id,
        expiresAt: new Date(Date.now() + (deps.planTtlMs ?? 3600_000)),
      });
      return { planId, operation: last.operation };
    },

    /** Reads the check's outcome onto the incarnation; says whether to repair. */
    async recordDrift({
      incarnation,
      planId,
    }: {
      incarnation: string;
      planId: string;
    }): Promise<{ drifted: string[]; repair: boolean }> {
      const plan = await getRun(db, planId);
      const hosts = await driftedHosts(db, planId);
      const failed = !plan || plan.status !== 'succeeded';
      await recordDrift(db, incarnation, {
        status: failed ? 'check_failed' : hosts.drifted.length > 0 ? 'drifted' : 'in_sync',
        planId,
        drifted: hosts.drifted,
      });
      const inc = await getIncarnation(db, incarnation);
      return { drifted: hosts.drifted, repair: !failed && hosts.drifted.length > 0 && inc?.drift_auto_repair === true };
    },

    /** Applies the check's plan (as POST .../runs {plan_id} would) and starts its run; null when it cannot now. */
    async beginRepair({
      incarnation,
      planId,
    }: {
      incarnation: string;
      planId: string;
    }): Promise<{ applyId: string; operation: string } | null> {
      if (!deps.runs)
        throw new Error('drift repair needs the run service (runs/components.ts passes it to the workers)');
      const outcome = await deps.runs.applyPlan({ name: incarnation, planId, by: DRIFT_CHECKER });
      // Refused: another run took the lock first, something committed since the check (stale), or
      // the plan expired; the next check looks again. Nothing was recorded.
      if (!outcome.accepted) {
        deps.log.info('drift repair not started', { incarnation, plan_id: planId, reason: outcome.reason });
        return null;
      }
      return { applyId: outcome.applyId, operation: outcome.operation };
    },
  };
}

export type DriftActivities = ReturnType<typeof createDriftActivities>;
