// The runs an operator (or the keeper) starts, each the same saga (docs/architecture.md "The run
// path"): find the incarnation and its service, pin the version, check what is knowable, seal secret
// inputs, record the run and take the lock, start the workflow (launch.ts). Moved here from the
// API routes unchanged in order; the field names are the JSON pointers of the request they answer.
import { beginRun, createIncarnation, type IncarnationRecord } from '../../db/repos/incarnations';
import { DESTROY } from '../../db/repos/run-outcome';
import { beginRunOrWait } from '../../db/repos/run-queue';
import { getRun } from '../../db/repos/runs';
import { lastCommittedInput } from '../../db/repos/runs-carryover';
import { mergeInput, type InputMode } from '../../scenario/input-merge';
import { refuseUnreviewedRetry } from './retry-review';
import { checkRunBudget } from './budget';
import { newApplyId } from '../apply-id';
import { startUpgradeWorkflow } from '../client';
import { loadChecked, precheck } from './checks';
import { checkAndSeal, inputOver } from './prepare';
import { temporalOf, type RunServiceDeps } from './context';
import { launch, sealInputs, startRun } from './launch';
import { refuse, type RunAccepted } from './outcome';
import { applyPlan } from './plan-apply';
import { mustIncarnation, pinned, serviceOf, versionToApply } from './source';
import { checkHostInput, incarnationHostInput } from './host-input';
import type { HostInput } from '../../scenario/host-input';

export interface CreateRequest {
  name: string;
  service: string;
  covens: string[];
  version?: string;
  input?: Record<string, unknown>;
  /** Per-host input by sid and by coven (scenario/host-input.ts). */
  hostInput?: HostInput;
  allowEmpty?: boolean;
  by: string;
}

export async function create(deps: RunServiceDeps, body: CreateRequest): Promise<RunAccepted> {
  temporalOf(deps);
  const service = await serviceOf(deps, body.service);
  const version = await versionToApply(deps, service, body.version, '/body/version', {
    mustExist: body.version !== undefined,
    notYanked: true,
  });
  const applyId = newApplyId(body.name, 'create');
  // The create run's apply_id keys the new incarnation's secret inputs for its whole life.
  const { input, loaded } = await checkAndSeal(
    deps,
    service,
    version,
    { created: { name: body.name, secrets_key: applyId } },
    {
      operation: 'create',
      id: applyId,
      input: body.input ?? {},
      covens: body.covens,
      allowEmpty: body.allowEmpty ?? false,
      covensPath: '/body/covens',
    },
  );
  await checkHostInput(deps, loaded, {
    operation: 'create',
    input,
    hostInput: body.hostInput,
    covens: body.covens,
    field: '/body/host_input',
    strict: true,
    scenarioPrefix: deps.config.secretstore.scenario_prefix,
  });
  const run = {
    applyId,
    incarnation: body.name,
    operation: 'create',
    input,
    ...pinned(version),
    createdBy: body.by,
    service: service.name,
    hostInput: body.hostInput ?? null,
  };
  await createIncarnation(
    deps.db,
    {
      name: body.name,
      service: service.name,
      covens: body.covens,
      version: version.version,
      createdBy: body.by,
      secretsKey: applyId,
      hostInput: body.hostInput ?? null,
    },
    run,
  );
  return startRun(deps, run);
}

export interface RunRequest {
  name: string;
  operation?: string;
  input?: Record<string, unknown>;
  inputMode?: InputMode;
  maxFailed?: string | number;
  allowEmpty?: boolean;
  planId?: string;
  by: string;
}

/** An operation of an existing incarnation, or with `planId` exactly that plan's steps. */
export async function run(deps: RunServiceDeps, body: RunRequest): Promise<RunAccepted> {
  temporalOf(deps);
  if (body.planId !== undefined) {
    // allow_empty has a default (false): only an explicit true is a conflict.
    const given = {
      operation: body.operation !== undefined,
      input: body.input !== undefined,
      input_mode: body.inputMode !== undefined,
      allow_empty: body.allowEmpty === true,
      max_failed: body.maxFailed !== undefined,
    };
    const extra = (['operation', 'input', 'input_mode', 'allow_empty', 'max_failed'] as const).filter((k) => given[k]);
    if (extra.length > 0)
      throw refuse.invalid(
        `a run that applies a plan takes the plan's operation and input: leave out ${extra.join(', ')}`,
        extra.map((k) => ({ path: `/body/${k}`, message: 'not allowed with plan_id' })),
      );
    return applyPlan(deps, body.name, body.planId, body.by);
  }
  if (body.operation === undefined)
    throw refuse.invalid('give the operation to run, or the plan_id of a plan to apply', [
      { path: '/body/operation', message: 'required without plan_id' },
    ]);
  const operation = body.operation;
  if (operation === 'upgrade')
    throw refuse.invalid('upgrade is not a scenario: use POST /v1/incarnations/{name}/upgrade', [
      { path: '/body/operation', message: 'reserved' },
    ]);
  const inc = await mustIncarnation(deps, body.name);
  const service = await serviceOf(deps, inc.service);
  const version = await versionToApply(deps, service, inc.service_version, '/body/operation');
  const applyId = newApplyId(inc.name, operation);
  // The input is merged over the last committed run's (it holds references only), so a re-run does
  // not forget what the incarnation was made with.
  let maxFailed: string | undefined;
  const { input, loaded } = await checkAndSeal(
    deps,
    service,
    version,
    { existing: inc },
    {
      operation,
      id: applyId,
      input: await inputOver(deps, inc, body.input, body.inputMode),
      covens: inc.covens,
      allowEmpty: body.allowEmpty ?? false,
      covensPath: '/body/allow_empty',
    },
    (loaded) => {
      maxFailed = checkRunBudget(loaded, operation, body.maxFailed);
    },
  );
  await checkHostInput(deps, loaded, incarnationHostInput(deps, inc, operation, input));
  const run = {
    applyId,
    incarnation: inc.name,
    operation: operation,
    input,
    ...pinned(version),
    createdBy: body.by,
    service: service.name,
    ...(maxFailed !== undefined ? { maxFailed } : {}),
  };
  // Behind a converge run the run is recorded waiting for it, not refused (db/repos/run-queue.ts).
  const { waitsFor } = await beginRunOrWait(deps.db, inc.name, run);
  return startRun(deps, run, waitsFor);
}

/** Unlock-with-retry: the failed operation again, with `input` if given, else the failed run's. */
export interface RetryRequest {
  name: string;
  input?: Record<string, unknown>;
  inputMode?: InputMode;
  forceRender?: boolean;
  by: string;
}

export async function retry(deps: RunServiceDeps, body: RetryRequest): Promise<RunAccepted> {
  temporalOf(deps);
  const inc = await mustIncarnation(deps, body.name);
  const failed = inc.last_apply_id ? await getRun(deps.db, inc.last_apply_id) : undefined;
  if (!failed) throw refuse.conflict(`incarnation ${inc.name} has no failed run to retry`);
  if (!body.forceRender) await refuseUnreviewedRetry(deps, inc.name, failed);
  const service = await serviceOf(deps, inc.service);
  const applyId = newApplyId(inc.name, failed.operation);
  // An upgrade is retried towards the version it was moving to; any other run at the incarnation's.
  const version =
    failed.operation === 'upgrade' && failed.service_ref
      ? await versionToApply(deps, service, failed.service_ref, '/body/retry', { mustExist: true, notYanked: true })
      : await versionToApply(deps, service, inc.service_version, '/body/retry');
  // A retry without input reuses the failed run's, which holds references only. Checked before
  // anything is written (a secret input's value goes to the store only for a run that starts).
  const given = mergeInput(failed.input, body.input, body.inputMode).input;
  const loaded =
    failed.operation === 'upgrade'
      ? undefined
      : await precheck(deps, service, {
          operation: failed.operation,
          input: given,
          covens: inc.covens,
          allowEmpty: true,
          covensPath: '/body/input',
          version: { name: version.version, commit: version.commit },
          incarnation: inc,
        });
  const input = body.input
    ? await sealInputs(deps, { ...service, ref: version.commit }, inc, failed.operation, applyId, given, loaded)
    : failed.input;
  const run = {
    applyId,
    incarnation: inc.name,
    operation: failed.operation,
    input,
    ...pinned(version),
    createdBy: body.by,
    retryOf: failed.apply_id,
    service: service.name,
  };
  await beginRun(deps.db, inc.name, run, { fromLocked: true });
  return failed.operation === 'upgrade'
    ? launch(deps, run, (t) => startUpgradeWorkflow(t, { ...run, toVersion: null }))
    : startRun(deps, run);
}

export interface UpgradeRequest {
  name: string;
  version?: string;
  toVersion?: number;
  by: string;
}

/** Forward only: to a published version, or the state migrations at the incarnation's own version up to `toVersion`. */
export async function upgrade(deps: RunServiceDeps, body: UpgradeRequest): Promise<RunAccepted> {
  temporalOf(deps);
  const inc = await mustIncarnation(deps, body.name);
  if (body.version !== undefined && body.toVersion !== undefined) {
    throw refuse.invalid(
      'give either version (a published version) or to_version (a state migration at the current version), not both',
      [{ path: '/body/to_version', message: 'not with version' }],
    );
  }
  if (body.toVersion !== undefined && inc.state_schema_version !== null && body.toVersion < inc.state_schema_version) {
    throw refuse.invalid(`state migrations are forward only: the state is at version ${inc.state_schema_version}`, [
      { path: '/body/to_version', message: 'older than the current version' },
    ]);
  }
  const service = await serviceOf(deps, inc.service);
  const target =
    body.version !== undefined
      ? await versionToApply(deps, service, body.version, '/body/version', { mustExist: true, notYanked: true })
      : await versionToApply(deps, service, inc.service_version, '/body/to_version');
  if (inc.state_schema_version !== null && target.state_schema_version < inc.state_schema_version) {
    throw refuse.conflict(
      `upgrades are forward only: incarnation ${inc.name}'s state is at state_schema_version ${inc.state_schema_version}, ` +
        `version ${target.version} expects ${target.state_schema_version} (an older schema)`,
    );
  }
  if (body.toVersion !== undefined && body.toVersion > target.state_schema_version) {
    throw refuse.invalid(
      `service ${service.name}@${target.version} knows state schema versions up to ${target.state_schema_version}; ${body.toVersion} is not one of them`,
      [
        {
          path: '/body/to_version',
          message: `must be at most ${target.state_schema_version}, the service's state_schema_version`,
        },
      ],
    );
  }
  if (body.toVersion !== undefined) await loadChecked(deps, service, '/body/to_version', target.commit);
  const run = {
    applyId: newApplyId(inc.name, 'upgrade'),
    incarnation: inc.name,
    operation: 'upgrade',
    input: {},
    ...pinned(target),
    createdBy: body.by,
    service: service.name,
  };
  // Behind a converge run the upgrade is recorded waiting for it, as an operator's run is (db/repos/run-queue.ts).
  const { waitsFor } = await beginRunOrWait(deps.db, inc.name, run);
  const accepted = await launch(deps, run, (t) =>
    startUpgradeWorkflow(t, { ...run, toVersion: body.toVersion ?? null, ...(waitsFor ? { waitsFor } : {}) }),
  );
  return waitsFor ? { ...accepted, waitsFor } : accepted;
}

/**
 * Delete by the service's `destroy` operation, a normal run whose commit removes the record. A
 * service without `destroy` is refused (conflict): removing the record with force starts no run and
 * is the API's. `beforeLock` runs after every check, just before the lock is taken (the API drops
 * the drift schedule there: a destroyed incarnation has nothing left to check).
 */
export async function destroy(
  deps: RunServiceDeps,
  body: { name: string; by: string; beforeLock?: (inc: IncarnationRecord) => Promise<void> },
): Promise<RunAccepted> {
  temporalOf(deps);
  const inc = await mustIncarnation(deps, body.name);
  const service = await serviceOf(deps, inc.service);
  const version = await versionToApply(deps, service, inc.service_version, '/query/force');
  const loaded = await loadChecked(deps, service, '/query/force', version.commit);
  const destroyOp = (loaded.operations ?? []).find((o) => o.name === DESTROY);
  if (!destroyOp) {
    throw refuse.conflict(
      `service ${service.name}@${version.version} has no destroy operation (scenario/destroy/main.yml): ` +
        `pass ?force=true to remove the record of incarnation ${inc.name} without running anything (its hosts keep what was applied)`,
    );
  }
  const applyId = newApplyId(inc.name, DESTROY);
  // destroy runs with the inputs it declares, taken from the input the incarnation was last committed with.
  const declared = new Set(destroyOp.inputs.map((i) => i.name));
  const last = (await lastCommittedInput(deps.db, inc.last_committed_apply_id)) ?? {};
  const given = Object.fromEntries(Object.entries(last).filter(([k]) => declared.has(k)));
  const checked = await precheck(
    deps,
    service,
    {
      operation: DESTROY,
      input: given,
      covens: inc.covens,
      allowEmpty: true,
      covensPath: '/query/force',
      version: { name: version.version, commit: version.commit },
      incarnation: inc,
    },
    loaded,
  );
  const input = await sealInputs(deps, { ...service, ref: version.commit }, inc, DESTROY, applyId, given, checked);
  const run = {
    applyId,
    incarnation: inc.name,
    operation: DESTROY,
    input,
    ...pinned(version),
    createdBy: body.by,
    service: service.name,
  };
  if (body.beforeLock) await body.beforeLock(inc);
  await beginRun(deps.db, inc.name, run);
  return startRun(deps, run);
}

export interface ConvergeRequest {
  incarnation: string;
  service: string;
  serviceVersion: string | null;
  operation: string;
  input: Record<string, unknown>;
  sids: string[];
  by: string;
}

/**
 * A new host gets what its covens' ready incarnation already put on the others (runs/converge.ts):
 * the last committed operation with its last committed input, on those souls alone (new souls and
 * pending hosts that came back, in one run). Not checked
 * again (it committed with that input); refused as a conflict when another run holds the lock.
 */
export async function converge(deps: RunServiceDeps, body: ConvergeRequest): Promise<RunAccepted> {
  temporalOf(deps);
  const service = await serviceOf(deps, body.service);
  const version = await versionToApply(deps, service, body.serviceVersion, '/service_version', {
    mustExist: body.serviceVersion !== null,
  });
  const applyId = newApplyId(body.incarnation, body.operation);
  const run = {
    applyId,
    incarnation: body.incarnation,
    operation: body.operation,
    input: body.input,
    ...pinned(version),
    createdBy: body.by,
    service: service.name,
    targetSids: body.sids,
  };
  await beginRun(deps.db, body.incarnation, run);
  return startRun(deps, run);
}
