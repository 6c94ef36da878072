// The end of every run start (create, run, apply a plan, unlock-with-retry, upgrade, delete,
// converge, drift repair): the run is recorded and the incarnation's lock taken in PostgreSQL
// first, then the workflow is started; if Temporal refuses, the run is failed and the incarnation
// locked with the reason, never left `applying` with nothing running. A plan is started the same
// way; a plan Temporal refuses is failed (it holds no lock).
import { failUnstartedPlan } from '../../db/repos/plans';
import { lockRun } from '../../db/repos/run-outcome';
import { recordRunWorkflow } from '../../db/repos/run-lock';
import type { NewRun } from '../../db/repos/runs';
import type { TemporalClientHolder } from '../connection';
import { startPlanWorkflow, startRunWorkflow } from '../client';
import { temporalOf, type RunServiceDeps } from './context';
import { refuse, TEMPORAL_REFUSED_RUN, type RunAccepted } from './outcome';
import { sealSecretInputs } from './secret-inputs';

/** Starts the recorded run's workflow; on failure fails the run, locks the incarnation, refuses as unavailable. */
export async function launch(
  deps: RunServiceDeps,
  run: NewRun & { service: string },
  start: (t: TemporalClientHolder) => Promise<string>,
): Promise<RunAccepted> {
  let runId: string;
  try {
    runId = await start(temporalOf(deps));
  } catch (err) {
    await lockRun(deps.db, run.applyId, `the run could not be started: ${(err as Error).message}`, 'start');
    throw refuse.temporal(TEMPORAL_REFUSED_RUN);
  }
  // The apply_id fence: the run belongs to the execution the keeper started (db/repos/run-lock.ts).
  await recordRunWorkflow(deps.db, run.applyId, runId);
  return { accepted: true, applyId: run.applyId, incarnation: run.incarnation, operation: run.operation };
}

/** `waitsFor`: the run was recorded waiting for that converge run (db/repos/run-queue.ts); its workflow waits for the lock. */
export const startRun = async (deps: RunServiceDeps, run: NewRun & { service: string }, waitsFor?: string) => {
  const accepted = await launch(deps, run, (t) =>
    startRunWorkflow(t, { ...run, serviceRef: run.serviceRef, ...(waitsFor ? { waitsFor } : {}) }),
  );
  return waitsFor ? { ...accepted, waitsFor } : accepted;
};

/** Starts the recorded plan's workflow; if Temporal refuses, the plan is failed with the reason (unavailable). */
export async function startPlan(
  deps: RunServiceDeps,
  plan: Parameters<typeof startPlanWorkflow>[1],
  expiresAt: Date,
): Promise<RunAccepted> {
  let runId: string;
  try {
    runId = await startPlanWorkflow(temporalOf(deps), plan);
  } catch {
    await failUnstartedPlan(deps.db, plan.applyId, 'the plan could not be started: the workflow engine did not answer');
    throw refuse.temporal();
  }
  // The apply_id fence: the plan belongs to the execution the keeper started (db/repos/run-lock.ts).
  await recordRunWorkflow(deps.db, plan.applyId, runId);
  return { accepted: true, applyId: plan.applyId, incarnation: plan.incarnation, operation: plan.operation, expiresAt };
}

/** Secret inputs become references before the run is recorded (secret-inputs.ts). */
export function sealInputs(
  deps: RunServiceDeps,
  service: { name: string; git: string; ref: string; credential_ref?: string | null },
  incarnation: { name: string; secrets_key: string | null },
  operation: string,
  applyId: string,
  input: Record<string, unknown>,
  loaded?: { secretInputs?: Record<string, string[]> },
) {
  return sealSecretInputs({
    scenario: deps.scenario,
    secrets: deps.secrets,
    scenarioPrefix: deps.config.secretstore.scenario_prefix,
    cacheDir: deps.config.services.cache_dir,
    service,
    incarnation,
    operation,
    applyId,
    input,
    ...(loaded ? { loaded } : {}),
  });
}
