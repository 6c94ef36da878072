// Making a plan (docs/plans.md): the operation is checked and its secret inputs sealed exactly as a
// run's would be, the plan is recorded (it takes no lock: the incarnation keeps its status) and its
// workflow started. Three kinds: the plan of a create (no incarnation yet), of an upgrade (a
// preview on the migrated state), and of any other operation of an existing incarnation.
import { getIncarnation, type IncarnationRecord } from '../../db/repos/incarnations';
import { lastCommittedRun } from '../../db/repos/drift';
import { insertPlan } from '../../db/repos/plans';
import { lastCommittedInput } from '../../db/repos/runs-carryover';
import type { InputMode } from '../../scenario/input-merge';
import { newApplyId } from '../apply-id';
import { precheck } from './checks';
import type { RunServiceDeps } from './context';
import { startPlan } from './launch';
import { checkAndSeal, inputOver } from './prepare';
import { refuse, type RunAccepted } from './outcome';
import { pinned, serviceOf, versionToApply } from './source';
import { checkHostInput, incarnationHostInput } from './host-input';
import type { HostInput } from '../../scenario/host-input';

export interface PlanRequest {
  /** The incarnation; for the plan of a create, the one it would make. */
  name: string;
  operation: string;
  input?: Record<string, unknown>;
  inputMode?: InputMode;
  allowEmpty?: boolean;
  /** The plan of a create only (the incarnation does not exist yet). */
  service?: string;
  covens?: string[];
  /** The plan of a create, or of an upgrade (the version to move to). */
  version?: string;
  /** The plan of a create only: the per-host input it would be made with (scenario/host-input.ts). */
  hostInput?: HostInput;
  by: string;
}

export async function plan(deps: RunServiceDeps, body: PlanRequest): Promise<RunAccepted> {
  const existing = await getIncarnation(deps.db, body.name);
  if (!existing) return planCreate(deps, body.name, body, body.by);
  const extra = (
    ['service', 'covens', 'hostInput', ...(body.operation === 'upgrade' ? [] : (['version'] as const))] as const
  ).filter((k) => body[k] !== undefined);
  if (extra.length > 0) {
    throw refuse.invalid(
      `incarnation ${body.name} exists: ${extra.map((k) => (k === 'hostInput' ? 'host_input (set it with PUT /v1/incarnations/{name}/host-input)' : k)).join(', ')} belong to the plan of a create only`,
      extra.map((k) => ({
        path: `/body/${k === 'hostInput' ? 'host_input' : k}`,
        message: 'only for the plan of a create',
      })),
    );
  }
  if (body.operation === 'upgrade') return planUpgrade(deps, existing, body, body.by);
  const inc = existing;
  const service = await serviceOf(deps, inc.service);
  const version = await versionToApply(deps, service, inc.service_version, '/body/operation');
  const planId = newApplyId(inc.name, `${body.operation}.plan`);
  const { input, loaded } = await checkAndSeal(
    deps,
    service,
    version,
    { existing: inc },
    {
      operation: body.operation,
      id: planId,
      input: await inputOver(deps, inc, body.input, body.inputMode),
      covens: inc.covens,
      allowEmpty: body.allowEmpty ?? false,
      covensPath: '/body/allow_empty',
    },
  );
  await checkHostInput(deps, loaded, incarnationHostInput(deps, inc, body.operation, input));
  const expiresAt = new Date(Date.now() + deps.config.plans.ttl_ms);
  const plan = {
    applyId: planId,
    incarnation: inc.name,
    operation: body.operation,
    input,
    ...pinned(version),
    createdBy: body.by,
    service: service.name,
  };
  await insertPlan(deps.db, { ...plan, base: inc.last_committed_apply_id, expiresAt });
  return startPlan(deps, plan, expiresAt);
}

/**
 * The plan of a create (the incarnation does not exist yet): checked like a create,
 * recorded with the service, covens and version it would be made with; applying it creates it.
 */
async function planCreate(deps: RunServiceDeps, name: string, body: PlanRequest, by: string) {
  if (body.operation !== 'create' || body.service === undefined || body.covens === undefined) {
    const missing = [
      ...(body.service === undefined ? ['service'] : []),
      ...(body.covens === undefined ? ['covens'] : []),
    ];
    throw refuse.notFound(
      `incarnation ${name} does not exist; to plan its create, send operation "create" with service and covens` +
        `${missing.length > 0 ? ` (missing: ${missing.join(', ')})` : ''}`,
    );
  }
  const service = await serviceOf(deps, body.service);
  const version = await versionToApply(deps, service, body.version, '/body/version', {
    mustExist: body.version !== undefined,
    notYanked: true,
  });
  const planId = newApplyId(name, 'create.plan');
  const { input, loaded } = await checkAndSeal(
    deps,
    service,
    version,
    { created: { name, secrets_key: planId } },
    {
      operation: 'create',
      id: planId,
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
  const expiresAt = new Date(Date.now() + deps.config.plans.ttl_ms);
  const plan = {
    applyId: planId,
    incarnation: name,
    operation: 'create',
    input,
    ...pinned(version),
    createdBy: by,
    service: service.name,
    hostInput: body.hostInput ?? null,
  };
  await insertPlan(deps.db, {
    ...plan,
    base: null,
    expiresAt,
    target: { service: service.name, covens: body.covens, version: version.version },
  });
  return startPlan(deps, plan, expiresAt);
}

/**
 * The plan of an upgrade to a published version (docs/plans.md): the migrations it would run and
 * the state after them, and what the incarnation's last committed operation at the new version
 * would change on every host, on that migrated state. A preview: it is not applied as such (the
 * upgrade migrates state only; a run afterwards changes the hosts, and can be planned then).
 */
async function planUpgrade(deps: RunServiceDeps, inc: IncarnationRecord, body: PlanRequest, by: string) {
  if (body.version === undefined)
    throw refuse.invalid('the plan of an upgrade needs the version to move to', [
      { path: '/body/version', message: 'required with operation upgrade' },
    ]);
  const service = await serviceOf(deps, inc.service);
  const target = await versionToApply(deps, service, body.version, '/body/version', {
    mustExist: true,
    notYanked: true,
  });
  if (inc.state_schema_version !== null && target.state_schema_version < inc.state_schema_version) {
    throw refuse.conflict(
      `upgrades are forward only: incarnation ${inc.name}'s state is at state_schema_version ${inc.state_schema_version}, ` +
        `version ${target.version} expects ${target.state_schema_version} (an older schema)`,
    );
  }
  const last = inc.last_committed_apply_id ? await lastCommittedRun(deps.db, inc.last_committed_apply_id) : undefined;
  if (!last)
    throw refuse.conflict(
      `incarnation ${inc.name} has no committed operation: there is nothing an upgrade would change yet`,
    );
  const input = (await lastCommittedInput(deps.db, inc.last_committed_apply_id)) ?? {};
  // The input is checked against the new version's scenario (the schema guard is the point of the plan, not a refusal).
  await precheck(deps, service, {
    operation: last.operation,
    input,
    covens: inc.covens,
    allowEmpty: body.allowEmpty ?? false,
    covensPath: '/body/allow_empty',
    version: { name: target.version, commit: target.commit },
  });
  const planId = newApplyId(inc.name, 'upgrade.plan');
  const expiresAt = new Date(Date.now() + deps.config.plans.ttl_ms);
  const plan = {
    applyId: planId,
    incarnation: inc.name,
    operation: last.operation,
    input,
    ...pinned(target),
    createdBy: by,
    service: service.name,
  };
  await insertPlan(deps.db, {
    ...plan,
    base: inc.last_committed_apply_id,
    expiresAt,
    upgrade: {
      version: target.version,
      from_version: inc.state_schema_version,
      to_version: target.state_schema_version,
    },
  });
  // Answered as what was asked for: the plan of an upgrade (its steps preview `last.operation`).
  return { ...(await startPlan(deps, plan, expiresAt)), operation: 'upgrade' };
}
