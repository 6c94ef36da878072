// Starting a run from the API, shared by every route that starts one (create, run, apply a plan,
// unlock-with-retry, upgrade, delete, converge): the run is recorded and the incarnation's lock
// taken in PostgreSQL first, then the workflow is started; if Temporal refuses, the run is failed
// and the incarnation locked with the reason, never left `applying` with nothing running.
import { lockRun } from '../../db/repos/run-outcome';
import { recordRunWorkflow } from '../../db/repos/run-lock';
import { getIncarnation, lastTombstone, type IncarnationRecord } from '../../db/repos/incarnations';
import type { NewRun } from '../../db/repos/runs';
import { getService } from '../../db/repos/services';
import type { ServiceVersionRecord } from '../../db/repos/service-versions';
import { runUiUrl, type TemporalClientHolder } from '../../runs/connection';
import { startRunWorkflow } from '../../runs/client';
import { sealSecretInputs } from '../secret-inputs';
import type { ApiDeps } from '../deps';
import { problems } from '../problems';
import type { RunChecker } from './run-checks';

/** The keeper passes its Temporal client and scenario engine beside the common API deps (keeper/server.ts). */
type RunDeps = ApiDeps & { temporal?: TemporalClientHolder; scenario?: RunChecker };

export function temporalOf(deps: ApiDeps): TemporalClientHolder {
  const t = (deps as RunDeps).temporal;
  if (!t?.client) throw problems.unavailable('the workflow engine (Temporal)');
  return t;
}

export const uiLink = (deps: ApiDeps, applyId: string) => {
  const t = (deps as RunDeps).temporal;
  const c = deps.runtime.config.temporal;
  return runUiUrl(t?.uiUrl ?? c.ui_url, t?.namespace ?? c.namespace, applyId);
};

export async function mustIncarnation(deps: ApiDeps, name: string): Promise<IncarnationRecord> {
  const inc = await getIncarnation(deps.runtime.db, name);
  if (inc) return inc;
  const gone = await lastTombstone(deps.runtime.db, name);
  if (gone) {
    throw problems.notFound(`incarnation ${name} was deleted at ${gone.deleted_at.toISOString()}` +
      `${gone.forced ? ' (with force)' : gone.deleted_apply_id ? ` by run ${gone.deleted_apply_id}` : ''}; its history stays at /v1/incarnations/${name}/history`);
  }
  throw problems.notFound(`incarnation ${name} does not exist`);
}

/** Starts the recorded run's workflow; on failure fails the run, locks the incarnation, answers 503. */
export async function launch(deps: ApiDeps, run: NewRun & { service: string }, start: (t: TemporalClientHolder) => Promise<string>) {
  let runId: string;
  try {
    runId = await start(temporalOf(deps));
  } catch (err) {
    await lockRun(deps.runtime.db, run.applyId, `the run could not be started: ${(err as Error).message}`, 'start');
    throw problems.unavailable('the workflow engine (Temporal)');
  }
  // The apply_id fence: the run belongs to the execution the keeper started (db/repos/run-lock.ts).
  await recordRunWorkflow(deps.runtime.db, run.applyId, runId);
  return {
    status: 202,
    body: {
      apply_id: run.applyId, incarnation: run.incarnation, operation: run.operation, status: 'applying',
      run: `/v1/incarnations/${run.incarnation}/runs/${run.applyId}`, temporal_ui: uiLink(deps, run.applyId),
    },
    headers: { Location: `/v1/incarnations/${run.incarnation}/runs/${run.applyId}` },
  };
}

export const startRun = (deps: ApiDeps, run: NewRun & { service: string }) =>
  launch(deps, run, (t) => startRunWorkflow(t, { ...run, serviceRef: run.serviceRef }));

/** Secret inputs become references before the run is recorded (api/secret-inputs.ts). */
export function sealInputs(deps: ApiDeps, service: { name: string; git: string; ref: string; credential_ref?: string | null }, incarnation: { name: string; secrets_key: string | null }, operation: string, applyId: string, input: Record<string, unknown>,
  loaded?: { secretInputs?: Record<string, string[]> }) {
  const { config, scenarioSecrets } = deps.runtime;
  return sealSecretInputs({
    scenario: deps.scenario, secrets: scenarioSecrets, scenarioPrefix: config.secretstore.scenario_prefix, cacheDir: config.services.cache_dir,
    service, incarnation, operation, applyId, input, ...(loaded ? { loaded } : {}),
  });
}

/** What a run records about the version it applies: the ref (service_ref) and its pinned commit. */
export const pinned = (v: ServiceVersionRecord) => ({ serviceRef: v.version, serviceCommit: v.commit });

export async function serviceOf(deps: ApiDeps, name: string) {
  const service = await getService(deps.runtime.db, name);
  if (!service) throw problems.invalid(`service ${name} is not in the catalog; register it with POST /v1/services`, [{ path: '/body/service', message: 'unknown service' }]);
  return service;
}
