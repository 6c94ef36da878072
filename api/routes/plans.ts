// Plans (docs/plans.md): POST renders an operation exactly as a run would and sends every step to
// its host in check mode; nothing is applied and the incarnation's status does not change. GET reads
// a plan back, with each host's steps, whether each would change something and the diff, until
// and after it expires. Applying one is POST .../runs {plan_id} (plan-apply.ts).
import { getIncarnation, type IncarnationRecord } from '../../db/repos/incarnations';
import { lastCommittedRun } from '../../db/repos/drift';
import { insertPlan, listPlans } from '../../db/repos/plans';
import { recordRunWorkflow } from '../../db/repos/run-lock';
import { mergeInput } from '../../scenario/input-merge';
import { getRun, lastCommittedInput, loadPlans, runReport, type RunRecord } from '../../db/repos/runs';
import type { ApiDeps } from '../deps';
import { newApplyId, startPlanWorkflow } from '../../runs/client';
import { decodeCursor, pageBody } from '../pagination';
import { problems } from '../problems';
import { defineRoute } from '../route';
import { pageQuerySchema } from '../schemas/common';
import { APPLY_ID_RE, nameParams, runReportQuery, type RunReportQuery } from '../schemas/incarnations';
import {
  createPlanBody, planAcceptedSchema, planListSchema, planParams, planSchema, type CreatePlanInput, type PlanStatus,
} from '../schemas/plans';
import { parseWait, waitForEnd } from './incarnations';
import { precheck } from './run-checks';
import { mustIncarnation, pinned, sealInputs, serviceOf, temporalOf } from './run-start';
import { versionToApply } from './service-source';

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

function planStatus(p: RunRecord, now = Date.now()): PlanStatus {
  if (p.status === 'running') return 'planning';
  if (p.status === 'failed') return 'failed';
  if (p.applied_by) return 'applied';
  return p.expires_at && p.expires_at.getTime() <= now ? 'expired' : 'ready';
}

function planSummary(p: RunRecord) {
  return {
    plan_id: p.apply_id, incarnation: p.incarnation, operation: p.operation, status: planStatus(p), error: p.error,
    service_ref: p.service_ref, service_commit: p.service_commit, based_on: p.plan_base, summary: p.summary,
    created_at: p.created_at.toISOString(), finished_at: iso(p.finished_at), expires_at: (p.expires_at ?? p.created_at).toISOString(),
    applied_by: p.applied_by, upgrade: p.plan_upgrade ?? null,
  };
}

/** Starts the recorded plan's workflow; if Temporal refuses, the plan is failed with the reason (503). */
async function startPlan(deps: ApiDeps, plan: Parameters<typeof startPlanWorkflow>[1], expiresAt: Date) {
  let runId: string;
  try {
    runId = await startPlanWorkflow(temporalOf(deps), plan);
  } catch {
    await deps.runtime.db('incarnation_runs').where({ apply_id: plan.applyId, status: 'running' })
      .update({ status: 'failed', phase: 'done', error: 'the plan could not be started: the workflow engine did not answer', finished_at: deps.runtime.db.fn.now() });
    throw problems.unavailable('the workflow engine (Temporal)');
  }
  // The apply_id fence: the plan belongs to the execution the keeper started (db/repos/run-lock.ts).
  await recordRunWorkflow(deps.runtime.db, plan.applyId, runId);
  const url = `/v1/incarnations/${plan.incarnation}/plans/${plan.applyId}`;
  return {
    status: 202, headers: { Location: url },
    body: { plan_id: plan.applyId, incarnation: plan.incarnation, operation: plan.operation, status: 'planning' as const, plan: url, expires_at: expiresAt.toISOString() },
  };
}

/**
 * The plan of a create (the incarnation does not exist yet): checked like POST /v1/incarnations,
 * recorded with the service, covens and version it would be made with; applying it creates it.
 */
async function planCreate(deps: ApiDeps, name: string, body: CreatePlanInput, by: string) {
  if (body.operation !== 'create' || body.service === undefined || body.covens === undefined) {
    const missing = [...(body.service === undefined ? ['service'] : []), ...(body.covens === undefined ? ['covens'] : [])];
    throw problems.notFound(`incarnation ${name} does not exist; to plan its create, send operation "create" with service and covens` +
      `${missing.length > 0 ? ` (missing: ${missing.join(', ')})` : ''}`);
  }
  const service = await serviceOf(deps, body.service);
  const version = await versionToApply(deps, service, body.version, '/body/version', { mustExist: body.version !== undefined, notYanked: true });
  const planId = newApplyId(name, 'create.plan');
  const loaded = await precheck(deps, service, {
    operation: 'create', input: body.input ?? {}, covens: body.covens, allowEmpty: body.allow_empty ?? false, covensPath: '/body/covens',
    version: { name: version.version, commit: version.commit },
  });
  const input = await sealInputs(deps, { ...service, ref: version.commit }, { name, secrets_key: planId }, 'create', planId, body.input ?? {}, loaded);
  const expiresAt = new Date(Date.now() + deps.runtime.config.plans.ttl_ms);
  const plan = { applyId: planId, incarnation: name, operation: 'create', input, ...pinned(version), createdBy: by, service: service.name };
  await insertPlan(deps.runtime.db, { ...plan, base: null, expiresAt, target: { service: service.name, covens: body.covens, version: version.version } });
  return startPlan(deps, plan, expiresAt);
}

/**
 * The plan of an upgrade to a published version (docs/plans.md): the migrations it would run and
 * the state after them, and what the incarnation's last committed operation at the new version
 * would change on every host, on that migrated state. A preview: it is not applied as such (the
 * upgrade migrates state only; a run afterwards changes the hosts, and can be planned then).
 */
async function planUpgrade(deps: ApiDeps, inc: IncarnationRecord, body: CreatePlanInput, by: string) {
  if (body.version === undefined) throw problems.invalid('the plan of an upgrade needs the version to move to', [{ path: '/body/version', message: 'required with operation upgrade' }]);
  const service = await serviceOf(deps, inc.service);
  const target = await versionToApply(deps, service, body.version, '/body/version', { mustExist: true, notYanked: true });
  if (inc.state_schema_version !== null && target.state_schema_version < inc.state_schema_version) {
    throw problems.conflict(`upgrades are forward only: incarnation ${inc.name}'s state is at state_schema_version ${inc.state_schema_version}, ` +
      `version ${target.version} expects ${target.state_schema_version} (an older schema)`);
  }
  const last = inc.last_committed_apply_id ? await lastCommittedRun(deps.runtime.db, inc.last_committed_apply_id) : undefined;
  if (!last) throw problems.conflict(`incarnation ${inc.name} has no committed operation: there is nothing an upgrade would change yet`);
  const input = (await lastCommittedInput(deps.runtime.db, inc.last_committed_apply_id)) ?? {};
  // The input is checked against the new version's scenario (the schema guard is the point of the plan, not a refusal).
  await precheck(deps, service, {
    operation: last.operation, input, covens: inc.covens, allowEmpty: body.allow_empty ?? false, covensPath: '/body/allow_empty',
    version: { name: target.version, commit: target.commit },
  });
  const planId = newApplyId(inc.name, 'upgrade.plan');
  const expiresAt = new Date(Date.now() + deps.runtime.config.plans.ttl_ms);
  const plan = { applyId: planId, incarnation: inc.name, operation: last.operation, input, ...pinned(target), createdBy: by, service: service.name };
  await insertPlan(deps.runtime.db, {
    ...plan, base: inc.last_committed_apply_id, expiresAt,
    upgrade: { version: target.version, from_version: inc.state_schema_version, to_version: target.state_schema_version },
  });
  return startPlan(deps, plan, expiresAt);
}

export const planRoutes = [
  defineRoute<{ name: string }, Record<string, never>, CreatePlanInput>({
    method: 'post', path: '/v1/incarnations/{name}/plans', operationId: 'createPlan', tag: 'Incarnations', permission: 'incarnations:plan',
    summary: 'Plan an operation',
    description: 'Renders the operation as a run would and sends every step to its host in check mode: the state modules say what they would change and change nothing. ' +
      'The incarnation keeps its status; read the plan with GET .../plans/{plan_id}, apply it with POST .../runs {"plan_id"} before it expires (config plans.ttl).',
    params: nameParams, body: { schema: createPlanBody, required: true },
    responses: { 202: { description: 'accepted; read the plan when it is ready', schema: planAcceptedSchema } },
    async handler({ params, body, caller, deps }) {
      temporalOf(deps);
      const existing = await getIncarnation(deps.runtime.db, params.name);
      if (!existing) return planCreate(deps, params.name, body, caller.aid);
      const extra = (['service', 'covens', ...(body.operation === 'upgrade' ? [] : ['version'] as const)] as const).filter((k) => body[k] !== undefined);
      if (extra.length > 0) {
        throw problems.invalid(`incarnation ${params.name} exists: ${extra.join(', ')} belong to the plan of a create only`, extra.map((k) => ({ path: `/body/${k}`, message: 'only for the plan of a create' })));
      }
      if (body.operation === 'upgrade') return planUpgrade(deps, existing, body, caller.aid);
      const inc = existing;
      const service = await serviceOf(deps, inc.service);
      const version = await versionToApply(deps, service, inc.service_version, '/body/operation');
      const planId = newApplyId(inc.name, `${body.operation}.plan`);
      const given = mergeInput(await lastCommittedInput(deps.runtime.db, inc.last_committed_apply_id), body.input, body.input_mode).input;
      const loaded = await precheck(deps, service, {
        operation: body.operation, input: given, covens: inc.covens, allowEmpty: body.allow_empty ?? false, covensPath: '/body/allow_empty',
        version: { name: version.version, commit: version.commit }, incarnation: inc,
      });
      const input = await sealInputs(deps, { ...service, ref: version.commit }, inc, body.operation, planId, given, loaded);
      const expiresAt = new Date(Date.now() + deps.runtime.config.plans.ttl_ms);
      const plan = { applyId: planId, incarnation: inc.name, operation: body.operation, input, ...pinned(version), createdBy: caller.aid, service: service.name };
      await insertPlan(deps.runtime.db, { ...plan, base: inc.last_committed_apply_id, expiresAt });
      return startPlan(deps, plan, expiresAt);
    },
  }),
  defineRoute<{ name: string }, { limit: number; cursor?: string }>({
    method: 'get', path: '/v1/incarnations/{name}/plans', operationId: 'listPlans', tag: 'Incarnations', permission: 'incarnations:read',
    summary: "An incarnation's plans", description: 'Newest first, each with its status (`planning`, `ready`, `failed`, `applied`, `expired`) and counts.',
    params: nameParams, query: pageQuerySchema,
    responses: { 200: { description: 'a page of plans', schema: planListSchema } },
    async handler({ params, query, deps }) {
      const page = await listPlans(deps.runtime.db, params.name, { limit: query.limit, after: decodeCursor(query.cursor, APPLY_ID_RE) });
      // Plans of a create exist before their incarnation: only a name with neither is unknown.
      if (page.items.length === 0 && query.cursor === undefined) await mustIncarnation(deps, params.name);
      return { status: 200, body: pageBody(page, planSummary) };
    },
  }),
  defineRoute<{ name: string; plan_id: string }, RunReportQuery>({
    method: 'get', path: '/v1/incarnations/{name}/plans/{plan_id}', operationId: 'getPlan', tag: 'Incarnations', permission: 'incarnations:read',
    summary: 'A plan', description: 'Per host and step: would it change something, and the diff (files: keyed content digests, a unified diff unless the file holds or will hold a secret, mode, owner, group; packages: from and to version). `?wait=30s` holds the answer until the plan is ready.',
    params: planParams, query: runReportQuery,
    responses: { 200: { description: 'the plan', schema: planSchema } },
    async handler({ params, query, caller, deps }) {
      const waitMs = query.wait === undefined ? undefined : parseWait(query.wait);
      let plan = await getRun(deps.runtime.db, params.plan_id);
      if (!plan || plan.kind !== 'plan' || plan.incarnation !== params.name) throw problems.notFound(`incarnation ${params.name} has no plan ${params.plan_id}`);
      if (waitMs !== undefined && plan.status === 'running') plan = await waitForEnd(deps, caller.aid, plan, waitMs);
      const report = await runReport(deps.runtime.db, plan.apply_id);
      // The facts render used for each host: what an apply compares before the host's first step.
      const facts = await loadPlans(deps.runtime.db, plan.apply_id, report.hosts.map((h) => h.sid));
      const stepsBySid = new Map<string, typeof report.steps>();
      for (const s of report.steps) (stepsBySid.get(s.sid) ?? stepsBySid.set(s.sid, []).get(s.sid)!).push(s);
      return {
        status: 200,
        body: {
          ...planSummary(plan), input: plan.input, render_errors: plan.render_errors,
          hosts: report.hosts.map((h) => ({
            sid: h.sid, status: h.status, reason: h.reason, facts: facts.get(h.sid)?.soulprint ?? null,
            steps: (stepsBySid.get(h.sid) ?? []).map((s) => ({
              index: s.step_index, name: s.name, module: s.module, status: s.status, would_change: s.changed, output: s.output,
              skip_reason: s.skip_reason ?? null, diff: s.diff ?? null,
            })),
          })),
        },
      };
    },
  }),
];
