// Incarnations: create (runs `create`), list, get, history, unlock (and unlock-with-retry); upgrade
// and delete are in incarnation-edges.ts, an incarnation's runs (start, list, report) in runs.ts. A
// handler that starts a run decodes the request and calls the run service (runs/start/service.ts),
// which pins the version, checks, records the run, takes the lock and starts the workflow; the
// answer maps its outcome.
import { listHistory, listIncarnations, unlockIncarnation, type IncarnationRecord } from '../../db/repos/incarnations';
import { lastRunOf, runsByIds, type RunRecord } from '../../db/repos/runs';
import { latestVersions, pairKey, versionsByPair, type ServiceVersionRecord } from '../../db/repos/service-versions';
import { yankView } from './service-versions';
import type { ApiDeps } from '../deps';
import { decodeCursor, pageBody } from '../pagination';
import { defineRoute } from '../route';
import { mustIncarnation, runAnswer } from './run-start';
import { historyOwner, runSummary } from './runs';
import { listPendingHosts } from '../../db/repos/pending-hosts';
import { pageQuerySchema } from '../schemas/common';
import { acceptedSchema } from '../schemas/runs';
import {
  INCARNATION_NAME_PATTERN,
  createIncarnationBody,
  historySchema,
  hostInputSchema,
  incarnationListSchema,
  incarnationSchema,
  listIncarnationsQuery,
  nameParams,
  unlockBody,
  type CreateIncarnationInput,
  type ListIncarnationsQuery,
  type UnlockInput,
} from '../schemas/incarnations';
import type { HostInput } from '../../scenario/host-input';

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
    host_input: inc.host_input ?? null,
    created_at: inc.created_at.toISOString(),
    updated_at: inc.updated_at.toISOString(),
  };
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
          ...(body.host_input ? { hostInput: body.host_input } : {}),
          allowEmpty: body.allow_empty,
          by: caller.aid,
        }),
      );
    },
  }),
  defineRoute<{ name: string }, Record<string, never>, HostInput>({
    method: 'put',
    path: '/v1/incarnations/{name}/host-input',
    operationId: 'setIncarnationHostInput',
    tag: 'Incarnations',
    permission: 'incarnations:update',
    summary: 'Set the per-host input',
    description:
      'Replaces the per-host input (`{"hosts": {<sid>: {...}}, "covens": {<coven>: {...}}}`; `{}` removes it). Each host\'s and coven\'s entry is checked merged over the input of the last committed run, against its operation\'s declarations; a bad value is a 400 naming the host or coven, the field and the rule, and nothing is stored. Nothing runs: the next run or plan renders with it.',
    params: nameParams,
    body: { schema: hostInputSchema, required: true },
    responses: { 200: { description: 'the incarnation with its new per-host input', schema: incarnationSchema } },
    async handler({ params, body, deps }) {
      const inc = await deps.runs.setHostInput({ name: params.name, hostInput: body });
      return {
        status: 200,
        body: view(deps, inc, await lastRunOf(deps.runtime.db, inc.name), await versionFacts(deps, [inc])),
      };
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
            host_input: run?.host_input ?? null,
          };
        }),
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
