// Plans (docs/plans.md): POST renders an operation exactly as a run would and sends every step to
// its host in check mode; nothing is applied and the incarnation's status does not change. GET reads
// a plan back, with each host's steps, whether each would change something and the diff, until
// and after it expires. Making one and applying one (POST .../runs {plan_id}) are the run service's
// (runs/start/plans.ts, runs/start/plan-apply.ts).
import { listPlans } from '../../db/repos/plans';
import { getRun, loadPlans, runReport, type RunRecord } from '../../db/repos/runs';
import { decodeCursor, pageBody } from '../pagination';
import { problems } from '../problems';
import { defineRoute } from '../route';
import { pageQuerySchema } from '../schemas/common';
import { nameParams } from '../schemas/incarnations';
import { APPLY_ID_RE, runReportQuery, type RunReportQuery } from '../schemas/runs';
import {
  createPlanBody,
  planAcceptedSchema,
  planListSchema,
  planParams,
  planSchema,
  type CreatePlanInput,
  type PlanStatus,
} from '../schemas/plans';
import { attribution } from '../attribution';
import { parseWait, waitForEnd } from './runs';
import { mustIncarnation, planAnswer } from './run-start';

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

function planStatus(p: RunRecord, now = Date.now()): PlanStatus {
  if (p.status === 'running') return 'planning';
  if (p.status === 'failed') return 'failed';
  if (p.applied_by) return 'applied';
  return p.expires_at && p.expires_at.getTime() <= now ? 'expired' : 'ready';
}

/**
 * The plan of an upgrade is labelled `upgrade`: its steps preview the last committed operation at the
 * new version, but applying it is refused (the upgrade migrates state only), so it says what to run.
 */
function upgradeOf(p: RunRecord) {
  if (!p.plan_upgrade) return null;
  const base = `/v1/incarnations/${p.incarnation}`;
  return {
    ...p.plan_upgrade,
    operation: p.operation,
    next:
      `upgrade the state with POST ${base}/upgrade {"version": "${p.plan_upgrade.version}"}, then apply the files of ` +
      `${p.plan_upgrade.version} with a run of ${p.operation} (POST ${base}/runs {"operation": "${p.operation}"}): an upgrade changes no host`,
  };
}

function planSummary(p: RunRecord) {
  return {
    plan_id: p.apply_id,
    incarnation: p.incarnation,
    operation: p.plan_upgrade ? 'upgrade' : p.operation,
    status: planStatus(p),
    error: p.error,
    service_ref: p.service_ref,
    service_commit: p.service_commit,
    based_on: p.plan_base,
    summary: p.summary,
    created_at: p.created_at.toISOString(),
    finished_at: iso(p.finished_at),
    expires_at: (p.expires_at ?? p.created_at).toISOString(),
    applied_by: p.applied_by,
    upgrade: upgradeOf(p),
    ...attribution(p),
  };
}

export const planRoutes = [
  defineRoute<{ name: string }, Record<string, never>, CreatePlanInput>({
    method: 'post',
    path: '/v1/incarnations/{name}/plans',
    operationId: 'createPlan',
    tag: 'Incarnations',
    permission: 'incarnations:plan',
    summary: 'Plan an operation',
    description:
      'Renders the operation as a run would and sends every step to its host in check mode: the state modules say what they would change and change nothing. ' +
      'The incarnation keeps its status; read the plan with GET .../plans/{plan_id}, apply it with POST .../runs {"plan_id"} before it expires (config plans.ttl).',
    params: nameParams,
    body: { schema: createPlanBody, required: true },
    responses: { 202: { description: 'accepted; read the plan when it is ready', schema: planAcceptedSchema } },
    async handler({ params, body, caller, deps }) {
      return planAnswer(
        await deps.runs.plan({
          name: params.name,
          operation: body.operation,
          input: body.input,
          inputMode: body.input_mode,
          allowEmpty: body.allow_empty,
          service: body.service,
          covens: body.covens,
          version: body.version,
          ...(body.host_input ? { hostInput: body.host_input } : {}),
          by: caller.aid,
        }),
      );
    },
  }),
  defineRoute<{ name: string }, { limit: number; cursor?: string }>({
    method: 'get',
    path: '/v1/incarnations/{name}/plans',
    operationId: 'listPlans',
    tag: 'Incarnations',
    permission: 'incarnations:read',
    summary: "An incarnation's plans",
    description: 'Newest first, each with its status (`planning`, `ready`, `failed`, `applied`, `expired`) and counts.',
    params: nameParams,
    query: pageQuerySchema,
    responses: { 200: { description: 'a page of plans', schema: planListSchema } },
    async handler({ params, query, deps }) {
      const page = await listPlans(deps.runtime.db, params.name, {
        limit: query.limit,
        after: decodeCursor(query.cursor, APPLY_ID_RE),
      });
      // Plans of a create exist before their incarnation: only a name with neither is unknown.
      if (page.items.length === 0 && query.cursor === undefined) await mustIncarnation(deps, params.name);
      return { status: 200, body: pageBody(page, planSummary) };
    },
  }),
  defineRoute<{ name: string; plan_id: string }, RunReportQuery>({
    method: 'get',
    path: '/v1/incarnations/{name}/plans/{plan_id}',
    operationId: 'getPlan',
    tag: 'Incarnations',
    permission: 'incarnations:read',
    summary: 'A plan',
    description:
      'Per host and step: would it change something, and the diff (files: keyed content digests, a unified diff unless the file holds or will hold a secret, mode, owner, group; packages: from and to version). `?wait=30s` holds the answer until the plan is ready.',
    params: planParams,
    query: runReportQuery,
    responses: { 200: { description: 'the plan', schema: planSchema } },
    async handler({ params, query, caller, deps }) {
      const waitMs = query.wait === undefined ? undefined : parseWait(query.wait);
      let plan = await getRun(deps.runtime.db, params.plan_id);
      if (!plan || plan.kind !== 'plan' || plan.incarnation !== params.name)
        throw problems.notFound(`incarnation ${params.name} has no plan ${params.plan_id}`);
      if (waitMs !== undefined && plan.status === 'running')
        plan = await waitForEnd(deps, caller, 'incarnations:read', plan, waitMs);
      const report = await runReport(deps.runtime.db, plan.apply_id);
      // The facts render used for each host, and which of them it read: what an apply compares.
      const facts = await loadPlans(
        deps.runtime.db,
        plan.apply_id,
        report.hosts.map((h) => h.sid),
      );
      const stepsBySid = new Map<string, typeof report.steps>();
      for (const s of report.steps) (stepsBySid.get(s.sid) ?? stepsBySid.set(s.sid, []).get(s.sid)!).push(s);
      return {
        status: 200,
        body: {
          ...planSummary(plan),
          input: plan.input,
          render_errors: plan.render_errors,
          hosts: report.hosts.map((h) => ({
            sid: h.sid,
            status: h.status,
            reason: h.reason,
            facts: facts.get(h.sid)?.soulprint ?? null,
            facts_read: facts.get(h.sid)?.reads?.facts ?? null,
            host_input: facts.get(h.sid)?.host_input ?? null,
            steps: (stepsBySid.get(h.sid) ?? []).map((s) => ({
              index: s.step_index,
              name: s.name,
              module: s.module,
              status: s.status,
              would_change: s.changed,
              output: s.output,
              skip_reason: s.skip_reason ?? null,
              diff: s.diff ?? null,
            })),
          })),
        },
      };
    },
  }),
];
