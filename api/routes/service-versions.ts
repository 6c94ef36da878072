// Published versions of a service (interface spec 9.2, issue 17 item 1): publish a ref (resolved and
// pinned now, checked like a registration), list them, and read one with its operations and their
// inputs, and yank (withdraw) one. An incarnation moves between them only through
// POST /v1/incarnations/{name}/upgrade.
import { getService, type ServiceRecord } from '../../db/repos/services';
import { getVersion, listVersions, yankVersion, type ServiceVersionRecord } from '../../db/repos/service-versions';
import type { ApiDeps } from '../deps';
import { problems } from '../problems';
import { defineRoute } from '../route';
import { problemSchema } from '../schemas/common';
import {
  publishVersionBody,
  serviceNameParams,
  serviceVersionDetailSchema,
  serviceVersionListSchema,
  serviceVersionSchema,
  versionParams,
  yankVersionBody,
  type PublishVersionInput,
  type YankVersionInput,
} from '../schemas/services';

/** The yank of a version as every answer shows it, or null. */
export function yankView(v: ServiceVersionRecord | undefined) {
  return v?.yanked_at
    ? { reason: v.yank_reason ?? '', yanked_by: v.yanked_by, yanked_at: v.yanked_at.toISOString() }
    : null;
}

function view(v: ServiceVersionRecord) {
  return {
    service: v.service,
    version: v.version,
    commit: v.commit,
    state_schema_version: v.state_schema_version,
    published_by: v.published_by,
    published_at: v.published_at.toISOString(),
    yanked: yankView(v),
  };
}

async function mustService(deps: ApiDeps, name: string): Promise<ServiceRecord> {
  const service = await getService(deps.runtime.db, name);
  if (!service) throw problems.notFound(`service ${name} is not in the catalog`);
  return service;
}

export const serviceVersionRoutes = [
  defineRoute<{ name: string }, Record<string, never>, PublishVersionInput>({
    method: 'post',
    path: '/v1/services/{name}/versions',
    operationId: 'publishServiceVersion',
    tag: 'Services',
    permission: 'services:publish',
    summary: 'Publish a version',
    description:
      'Resolves the ref to a commit now and pins it: moving the tag or pushing to the branch later changes nothing for this version. ' +
      'The commit is loaded and linted first; a ref that does not resolve or a lint error (file:line) is a 422 and nothing is stored. 409 when the ref is already published.',
    params: serviceNameParams,
    body: { schema: publishVersionBody, required: true },
    responses: {
      201: { description: 'published', schema: serviceVersionSchema },
      422: {
        description: 'the ref does not resolve, or its content fails soul-lint',
        schema: problemSchema,
        contentType: 'application/problem+json',
      },
    },
    async handler({ params, body, caller, deps }) {
      const service = await mustService(deps, params.name);
      if (await getVersion(deps.runtime.db, service.name, body.ref)) {
        throw problems.conflict(
          `version ${body.ref} of service ${service.name} is already published (a published version never changes its commit)`,
        );
      }
      const v = await deps.runs.publishChecked(deps.runtime.db, service, body.ref, '/body/ref', caller.aid);
      return {
        status: 201,
        body: view(v),
        headers: { Location: `/v1/services/${service.name}/versions/${encodeURIComponent(v.version)}` },
      };
    },
  }),
  defineRoute<{ name: string }>({
    method: 'get',
    path: '/v1/services/{name}/versions',
    operationId: 'listServiceVersions',
    tag: 'Services',
    permission: 'services:read',
    summary: "A service's published versions",
    description: 'Newest first, each with the commit it is pinned to and the state_schema_version that commit expects.',
    params: serviceNameParams,
    responses: { 200: { description: 'every published version', schema: serviceVersionListSchema } },
    async handler({ params, deps }) {
      const service = await mustService(deps, params.name);
      return {
        status: 200,
        body: { items: (await listVersions(deps.runtime.db, service.name)).map(view), next_cursor: null },
      };
    },
  }),
  defineRoute<{ name: string; version: string }>({
    method: 'get',
    path: '/v1/services/{name}/versions/{version}',
    operationId: 'getServiceVersion',
    tag: 'Services',
    permission: 'services:read',
    summary: 'A published version',
    description:
      'The version, its pinned commit, and the operations at that commit with their declared inputs (type, required, default).',
    params: versionParams,
    responses: { 200: { description: 'the version', schema: serviceVersionDetailSchema } },
    async handler({ params, deps }) {
      const service = await mustService(deps, params.name);
      const v = await getVersion(deps.runtime.db, service.name, params.version);
      if (!v) throw problems.notFound(`version ${params.version} of service ${service.name} is not published`);
      let loaded;
      try {
        loaded = await deps.runs.load(service, v.commit);
      } catch (err) {
        throw problems.unavailable(`the repository of service ${service.name} (${(err as Error).message})`);
      }
      return { status: 200, body: { ...view(v), operations: loaded.operations ?? [] } };
    },
  }),
  defineRoute<{ name: string; version: string }, Record<string, never>, YankVersionInput>({
    method: 'post',
    path: '/v1/services/{name}/versions/{version}/yank',
    operationId: 'yankServiceVersion',
    tag: 'Services',
    permission: 'services:yank',
    summary: 'Yank (withdraw) a version',
    description:
      'Marks a published version as withdrawn, with a reason. It is never offered as `newer_version`, and creating an incarnation ' +
      'with it, planning one, or upgrading to it is refused (409 naming the yank and its reason); a create without `version` takes the newest version that is not yanked. ' +
      'Incarnations already on it keep running its pinned commit and show `version_yanked`. A yank is final: yanking again is 409.',
    params: versionParams,
    body: { schema: yankVersionBody, required: true },
    responses: {
      200: { description: 'the version, with `yanked` set', schema: serviceVersionSchema },
      409: {
        description: 'the version is yanked already',
        schema: problemSchema,
        contentType: 'application/problem+json',
      },
    },
    async handler({ params, body, caller, deps }) {
      const service = await mustService(deps, params.name);
      const v = await yankVersion(deps.runtime.db, {
        service: service.name,
        version: params.version,
        reason: body.reason.trim(),
        by: caller.aid,
      });
      if (!v) throw problems.notFound(`version ${params.version} of service ${service.name} is not published`);
      return { status: 200, body: view(v) };
    },
  }),
];
