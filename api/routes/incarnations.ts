// Incarnations: create (runs `create`), list, get, history, other operations, run reports, unlock
// (and unlock-with-retry); upgrade and delete are in incarnation-edges.ts. A handler that starts a
// run decodes the request and calls the run service (runs/start/service.ts), which pins the version,
// checks, records the run, takes the lock and starts the workflow; the answer maps its outcome.
import {
  getIncarnation,
  lastTombstone,
  listHistory,
  listIncarnations,
  unlockIncarnation,
  type IncarnationRecord,
} from '../../db/repos/incarnations';
import { getRun, lastRunOf, listRuns, runReport, runsByIds, type RunRecord } from '../../db/repos/runs';
import { latestVersions, pairKey, versionsByPair, type ServiceVersionRecord } from '../../db/repos/service-versions';
import { yankView } from './service-versions';
import type { ApiDeps } from '../deps';
import { decodeCursor, pageBody } from '../pagination';
import { problems } from '../problems';
import { defineRoute } from '../route';
import { mustIncarnation, runAnswer, uiLink } from './run-start';
import { attribution } from '../attribution';
import { operatorSlots } from './run-watch-limits';
import { listPendingHosts } from '../../db/repos/pending-hosts';
import { pageQuerySchema } from '../schemas/common';
import {
  APPLY_ID_RE,
  INCARNATION_NAME_PATTERN,
  acceptedSchema,
  runListSchema,
  createIncarnationBody,
  historySchema,
  incarnationListSchema,
  incarnationSchema,
  listIncarnationsQuery,
  nameParams,
  runParams,
  runReportQuery,
  runReportSchema,
  startRunBody,
  unlockBody,
  type CreateIncarnationInput,
  type RunReportQuery,
  type ListIncarnationsQuery,
  type StartRunInput,
  type UnlockInput,
} from '../schemas/incarnations';

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

/** Holds the answer until the run leaves `running` or `ms` pass; one operator slot while held. */
export async function waitForEnd(deps: ApiDeps, aid: string, run: RunRecord, ms: number): Promise<RunRecord> {
  const release = operatorSlots(deps).acquire(aid);
  try {
    const deadline = Date.now() + ms;
    let current = run;
    while (current.status === 'running' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, Math.min(WAIT_POLL_MS, Math.max(0, deadline - Date.now()))));
      current = (await getRun(deps.runtime.db, run.apply_id)) ?? current;
    }
    return current;
  } finally {
    release();
  }
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

function runSummary(deps: ApiDeps, r: RunRecord) {
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

/** What an incarnation answer shows of versions: the service's newest one not yanked, and the incarnation's own (for its yank). */
export interface VersionFacts {
  latest: Map<string, ServiceVersionRecord>;
  own: Map<string, ServiceVersionRecord>;
}

export async function versionFacts(deps: ApiDeps, incs: IncarnationRecord[]): Promise<VersionFacts> {
  const [latest, own] = await Promise.all([
    latestVersions(
      deps.runtime.db,
      incs.map((i) => i.service),
    ),
    versionsByPair(
      deps.runtime.db,
      incs.filter((i) => i.service_version !== null).map((i) => ({ service: i.service, version: i.service_version! })),
    ),
  ]);
  return { latest, own };
}

/** Published later than `b`, in the order versions are listed (published_at, then version). */
function publishedAfter(a: ServiceVersionRecord, b: ServiceVersionRecord): boolean {
  const d = a.published_at.getTime() - b.published_at.getTime();
  return d !== 0 ? d > 0 : a.version > b.version;
}

/**
 * `newer_version` names the service's newest version that is not yanked when it is not the
 * incarnation's and was published after it: an incarnation on a yanked version is not offered an
 * older one as "newer". `version_yanked` is the yank of the incarnation's own version, if any.
 */
export function view(deps: ApiDeps, inc: IncarnationRecord, last: RunRecord | undefined, facts?: VersionFacts) {
  const latest = facts?.latest.get(inc.service);
  const own = inc.service_version !== null ? facts?.own.get(pairKey(inc.service, inc.service_version)) : undefined;
  const newer =
    latest &&
    inc.service_version !== null &&
    latest.version !== inc.service_version &&
    (!own || publishedAfter(latest, own));
  return {
    name: inc.name,
    service: inc.service,
    covens: inc.covens,
    status: inc.status,
    state: inc.state,
    state_schema_version: inc.state_schema_version,
    version: inc.service_version,
    version_yanked: yankView(own),
    service_commit: inc.service_commit,
    newer_version: newer ? latest.version : null,
    apply_id: inc.last_apply_id,
    last_run: last ? runSummary(deps, last) : null,
    drift: {
      interval: inc.drift_interval ?? null,
      auto_repair: inc.drift_auto_repair ?? false,
      status: inc.drift_status ?? 'unchecked',
      checked_at: inc.drift_checked_at ? inc.drift_checked_at.toISOString() : null,
      plan_id: inc.drift_plan_id ?? null,
      drifted_sids: inc.drifted_sids ?? [],
      checks_in_sync: inc.drift_checks_in_sync ?? 0,
      last_in_sync_at: inc.drift_in_sync_at ? inc.drift_in_sync_at.toISOString() : null,
    },
    created_at: inc.created_at.toISOString(),
    updated_at: inc.updated_at.toISOString(),
  };
}

/** A live incarnation, or (for reading its history and runs) the creation time of none when only a deleted one had the name. */
async function historyOwner(deps: ApiDeps, name: string): Promise<{ since?: Date }> {
  const inc = await getIncarnation(deps.runtime.db, name);
  if (inc) return { since: inc.created_at };
  if (await lastTombstone(deps.runtime.db, name)) return {};
  throw problems.notFound(`incarnation ${name} does not exist`);
}

export const incarnationRoutes = [
  defineRoute<Record<string, never>, Record<string, never>, CreateIncarnationInput>({
    method: 'post',
    path: '/v1/incarnations',
    operationId: 'createIncarnation',
    tag: 'Incarnations',
    permission: 'incarnations:create',
    summary: 'Create an incarnation',
    description:
      'Records the incarnation as `applying` and runs its `create` scenario on the hosts carrying its covens. 202 with the `apply_id`.',
    body: { schema: createIncarnationBody, required: true },
    responses: { 202: { description: 'accepted; follow the run report', schema: acceptedSchema } },
    async handler({ body, caller, deps }) {
      return runAnswer(
        deps,
        await deps.runs.create({
          name: body.name,
          service: body.service,
          covens: body.covens,
          version: body.version,
          input: body.input,
          allowEmpty: body.allow_empty,
          by: caller.aid,
        }),
      );
    },
  }),
  defineRoute<Record<string, never>, ListIncarnationsQuery>({
    method: 'get',
    path: '/v1/incarnations',
    operationId: 'listIncarnations',
    tag: 'Incarnations',
    permission: 'incarnations:read',
    summary: 'List incarnations',
    description: 'Ordered by name; filter by status and service.',
    query: listIncarnationsQuery,
    responses: { 200: { description: 'a page of incarnations', schema: incarnationListSchema } },
    async handler({ query, deps }) {
      const after = decodeCursor(query.cursor, INCARNATION_NAME_PATTERN);
      const page = await listIncarnations(
        deps.runtime.db,
        { status: query.status, service: query.service },
        { limit: query.limit, after },
      );
      const runs = await runsByIds(
        deps.runtime.db,
        page.items.map((i) => i.last_apply_id).filter((x): x is string => x !== null),
      );
      const facts = await versionFacts(deps, page.items);
      return {
        status: 200,
        body: pageBody(page, (i) => view(deps, i, i.last_apply_id ? runs.get(i.last_apply_id) : undefined, facts)),
      };
    },
  }),
  defineRoute<{ name: string }>({
    method: 'get',
    path: '/v1/incarnations/{name}',
    operationId: 'getIncarnation',
    tag: 'Incarnations',
    permission: 'incarnations:read',
    summary: 'Get an incarnation',
    description: 'Status (`applying`, `ready`, `error_locked`), committed state and the last run.',
    params: nameParams,
    responses: { 200: { description: 'the incarnation', schema: incarnationSchema } },
    async handler({ params, deps }) {
      const inc = await mustIncarnation(deps, params.name);
      const pending = (await listPendingHosts(deps.runtime.db, inc.name)).map((p) => ({
        sid: p.sid,
        status: p.status,
        reason: p.reason,
        apply_id: p.apply_id,
        since: p.since.toISOString(),
      }));
      return {
        status: 200,
        body: {
          ...view(deps, inc, await lastRunOf(deps.runtime.db, inc.name), await versionFacts(deps, [inc])),
          pending_hosts: pending,
        },
      };
    },
  }),
  defineRoute<{ name: string }, { limit: number; cursor?: string }>({
    method: 'get',
    path: '/v1/incarnations/{name}/history',
    operationId: 'getIncarnationHistory',
    tag: 'Incarnations',
    permission: 'incarnations:read',
    summary: 'State history',
    description: 'One state snapshot per committed change, oldest first, each with its run.',
    params: nameParams,
    query: pageQuerySchema,
    responses: { 200: { description: 'a page of snapshots', schema: historySchema } },
    async handler({ params, query, deps }) {
      const { since } = await historyOwner(deps, params.name);
      const after = decodeCursor(query.cursor, /^\d{1,19}$/);
      const page = await listHistory(deps.runtime.db, params.name, { limit: query.limit, after }, since);
      const runs = await runsByIds(
        deps.runtime.db,
        page.items.map((h) => h.apply_id),
      );
      return {
        status: 200,
        body: pageBody(page, (h) => {
          const run = runs.get(h.apply_id);
          return {
            id: h.id,
            apply_id: h.apply_id,
            operation: h.operation,
            state: h.state,
            state_schema_version: h.state_schema_version,
            service_commit: h.service_commit,
            created_at: h.created_at.toISOString(),
            run: run ? runSummary(deps, run) : null,
          };
        }),
      };
    },
  }),
  defineRoute<{ name: string }, Record<string, never>, StartRunInput>({
    method: 'post',
    path: '/v1/incarnations/{name}/runs',
    operationId: 'startRun',
    tag: 'Incarnations',
    permission: 'incarnations:run',
    summary: 'Run an operation, or apply a plan',
    description:
      'Runs `scenario/<operation>/main.yml`, or with `{"plan_id"}` exactly the steps of that plan, refusing any host that drifted since (docs/plans.md). 409 while the incarnation is `applying` or `error_locked` (unlock it first), and for a plan that is not `ready`, was applied, expired or is stale. ' +
      'While the keeper\'s own converge run (new hosts) holds the lock, an operation is accepted all the same: the answer\'s `waits_for` names that run, and this one starts when it ends (docs/runs.md "Converging new hosts"); a second run meanwhile is a 409.',
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
      if (waitMs !== undefined && run.status === 'running') run = await waitForEnd(deps, caller.aid, run, waitMs);
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
  defineRoute<{ name: string }, Record<string, never>, UnlockInput | undefined>({
    method: 'post',
    path: '/v1/incarnations/{name}/unlock',
    operationId: 'unlockIncarnation',
    tag: 'Incarnations',
    permission: 'incarnations:unlock',
    summary: 'Clear error_locked',
    description:
      'Without `retry`: back to `ready` with the last committed state, nothing runs (200). With `{"retry": true}`: runs the failed operation again, with `input` if given, else the failed run\'s input (202).',
    params: nameParams,
    body: { schema: unlockBody, required: false },
    responses: {
      200: { description: 'unlocked', schema: incarnationSchema },
      202: { description: 'unlocked and re-run', schema: acceptedSchema },
    },
    async handler({ params, body, caller, deps }) {
      if (!body?.retry) {
        const inc = await unlockIncarnation(deps.runtime.db, params.name);
        return {
          status: 200,
          body: view(deps, inc, await lastRunOf(deps.runtime.db, inc.name), await versionFacts(deps, [inc])),
        };
      }
      return runAnswer(
        deps,
        await deps.runs.retry({
          name: params.name,
          input: body.input,
          inputMode: body.input_mode,
          forceRender: body.force_render,
          by: caller.aid,
        }),
      );
    },
  }),
];
