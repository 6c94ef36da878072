// The runs of an incarnation: start one (an operation, or a plan by its id), list them, and the run
// report (held with `?wait=` until the run ends). A handler that starts a run decodes the request and
// calls the run service (runs/start/service.ts), which pins the version, checks, records the run,
// takes the lock and starts the workflow; the answer maps its outcome. Approving a run waiting at a
// gate is in run-gates.ts, its event stream in run-events.ts.
import { getIncarnation, lastTombstone } from '../../db/repos/incarnations';
import { getRun, listRuns, runReport, type RunRecord } from '../../db/repos/runs';
import type { ApiDeps } from '../deps';
import { decodeCursor, pageBody } from '../pagination';
import { problems } from '../problems';
import { defineRoute, type Caller } from '../route';
import { standingChecker } from '../stream-auth';
import { runAnswer, uiLink } from './run-start';
import { attribution } from '../attribution';
import { operatorSlots } from './run-watch-limits';
import { pageQuerySchema } from '../schemas/common';
import { nameParams, startRunBody, type StartRunInput } from '../schemas/incarnations';
import {
  APPLY_ID_RE,
  acceptedSchema,
  runListSchema,
  runParams,
  runReportQuery,
  runReportSchema,
  type RunReportQuery,
} from '../schemas/runs';

/** The longest `?wait=` a run report may be held for. */
const MAX_WAIT_MS = 60_000;
/** How often a held report looks at the run: it answers within this of the run's end. */
const WAIT_POLL_MS = 50;

export function parseWait(raw: string): number {
  const m = /^([0-9]{1,6})(ms|s)$/.exec(raw)!;
  const ms = Number(m[1]) * (m[2] === 's' ? 1000 : 1);
  if (ms > MAX_WAIT_MS)
    throw problems.invalid(`wait ${raw} is longer than ${MAX_WAIT_MS / 1000}s`, [
      { path: '/query/wait', message: `must be at most ${MAX_WAIT_MS / 1000}s` },
    ]);
  return ms;
}

/**
 * Holds the answer until the run leaves `running` or `ms` pass; one operator slot while held. The
 * caller is checked again while held (api/stream-auth.ts): a token revoked meanwhile ends the wait
 * with the 401 a new request would get, also through MCP.
 */
export async function waitForEnd(
  deps: ApiDeps,
  caller: Caller,
  permission: string,
  run: RunRecord,
  ms: number,
): Promise<RunRecord> {
  const release = operatorSlots(deps).acquire(caller.aid);
  const checkCaller = standingChecker(deps, caller, permission);
  try {
    const deadline = Date.now() + ms;
    let current = run;
    while (current.status === 'running' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, Math.min(WAIT_POLL_MS, Math.max(0, deadline - Date.now()))));
      await checkCaller();
      current = (await getRun(deps.runtime.db, run.apply_id)) ?? current;
    }
    return current;
  } finally {
    release();
  }
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export function runSummary(deps: ApiDeps, r: RunRecord) {
  return {
    apply_id: r.apply_id,
    operation: r.operation,
    status: r.status,
    phase: r.phase,
    service_ref: r.service_ref,
    service_commit: r.service_commit,
    error: r.error,
    summary: r.summary,
    created_at: r.created_at.toISOString(),
    finished_at: iso(r.finished_at),
    temporal_ui: uiLink(deps, r.apply_id),
    target_sids: r.target_sids ?? null,
    plan_id: r.plan_id ?? null,
    waits_for: r.waits_for ?? null,
    waiting: r.status === 'running' ? (r.waiting ?? null) : null,
    ...attribution(r),
  };
}

/** A live incarnation, or (for reading its history and runs) the creation time of none when only a deleted one had the name. */
export async function historyOwner(deps: ApiDeps, name: string): Promise<{ since?: Date }> {
  const inc = await getIncarnation(deps.runtime.db, name);
  if (inc) return { since: inc.created_at };
  if (await lastTombstone(deps.runtime.db, name)) return {};
  throw problems.notFound(`incarnation ${name} does not exist`);
}

export const runRoutes = [
  defineRoute<{ name: string }, Record<string, never>, StartRunInput>({
    method: 'post',
    path: '/v1/incarnations/{name}/runs',
    operationId: 'startRun',
    tag: 'Incarnations',
    permission: 'incarnations:run',
    summary: 'Run an operation, or apply a plan',
    description:
      'Runs `scenario/<operation>/main.yml`, or with `{"plan_id"}` exactly the steps of that plan, refusing any host that drifted since (docs/plans.md). 409 while the incarnation is `applying` or `error_locked` (unlock it first), and for a plan that is not `ready`, was applied, expired or is stale. ' +
      'While the keeper\'s own converge run (new hosts) holds the lock, an operation or a plan is accepted all the same: the answer\'s `waits_for` names that run, and this one starts when it ends (docs/runs.md "Converging new hosts"); a plan is then checked again and ends failed as stale, nothing applied, when that run applied to hosts it had checked or changed the state. A second run meanwhile is a 409.',
    params: nameParams,
    body: { schema: startRunBody, required: true },
    responses: { 202: { description: 'accepted', schema: acceptedSchema } },
    async handler({ params, body, caller, deps }) {
      return runAnswer(
        deps,
        await deps.runs.run({
          name: params.name,
          operation: body.operation,
          input: body.input,
          inputMode: body.input_mode,
          maxFailed: body.max_failed,
          allowEmpty: body.allow_empty,
          planId: body.plan_id,
          by: caller.aid,
        }),
      );
    },
  }),
  defineRoute<{ name: string }, { limit: number; cursor?: string }>({
    method: 'get',
    path: '/v1/incarnations/{name}/runs',
    operationId: 'listRuns',
    tag: 'Incarnations',
    permission: 'incarnations:read',
    summary: "An incarnation's runs",
    description:
      'Newest first, each with its status, phase, host counts and Temporal link; follow `next_cursor` for older runs.',
    params: nameParams,
    query: pageQuerySchema,
    responses: { 200: { description: 'a page of runs', schema: runListSchema } },
    async handler({ params, query, deps }) {
      const { since } = await historyOwner(deps, params.name);
      const after = decodeCursor(query.cursor, APPLY_ID_RE);
      const page = await listRuns(deps.runtime.db, params.name, { limit: query.limit, after }, since);
      return { status: 200, body: pageBody(page, (r) => runSummary(deps, r)) };
    },
  }),
  defineRoute<{ name: string; apply_id: string }, RunReportQuery>({
    method: 'get',
    path: '/v1/incarnations/{name}/runs/{apply_id}',
    operationId: 'getRun',
    tag: 'Incarnations',
    permission: 'incarnations:read',
    summary: 'Run report',
    description:
      'Per host, per step: ok, changed, failed, unknown or skipped, with output and timings; render errors when the run failed before dispatch. ' +
      `With \`?wait=30s\` (at most ${MAX_WAIT_MS / 1000}s) the answer comes when the run ends or the wait runs out, whichever is first ` +
      '(the report then says `status: running`); each operator may hold 8 waits or event streams per keeper (429 beyond).',
    params: runParams,
    query: runReportQuery,
    responses: { 200: { description: 'the run report', schema: runReportSchema } },
    async handler({ params, query, caller, deps }) {
      const waitMs = query.wait === undefined ? undefined : parseWait(query.wait);
      let run = await getRun(deps.runtime.db, params.apply_id);
      if (!run || run.incarnation !== params.name)
        throw problems.notFound(`incarnation ${params.name} has no run ${params.apply_id}`);
      if (waitMs !== undefined && run.status === 'running')
        run = await waitForEnd(deps, caller, 'incarnations:read', run, waitMs);
      const report = await runReport(deps.runtime.db, run.apply_id);
      const stepsBySid = new Map<string, typeof report.steps>();
      for (const s of report.steps) (stepsBySid.get(s.sid) ?? stepsBySid.set(s.sid, []).get(s.sid)!).push(s);
      return {
        status: 200,
        body: {
          ...runSummary(deps, run),
          incarnation: run.incarnation,
          input: run.input,
          render_errors: run.render_errors,
          hosts: report.hosts.map((h) => ({
            sid: h.sid,
            status: h.status,
            kid: h.kid,
            reason: h.reason,
            batch: h.batch,
            steps: (stepsBySid.get(h.sid) ?? []).map((s) => ({
              index: s.step_index,
              name: s.name,
              module: s.module,
              status: s.status,
              changed: s.changed,
              output: s.output,
              attempts: s.attempts,
              replayed: s.replayed,
              changed_when: s.changed_when ?? null,
              skip_reason: s.skip_reason ?? null,
              diff: s.diff ?? null,
              started_at: iso(s.started_at),
              finished_at: iso(s.finished_at),
            })),
          })),
        },
      };
    },
  }),
];
