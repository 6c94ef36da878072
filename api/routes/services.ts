// The service catalog: register, list, get, delete. Registering a taken name is 409, never an
// overwrite; deleting a service an incarnation uses is 409 naming them.
import { createService, deleteService, getService, listServices, type ServiceRecord } from '../../db/repos/services';
import { publishVersion } from '../../db/repos/service-versions';
import { displayGitUrl, gitUrlRefusal, parseGitUrl } from '../../scenario/load/git-policy';
import { liveKeepers } from '../../platform/keeper-claims';
import { decodeCursor, pageBody } from '../pagination';
import { problems } from '../problems';
import { defineRoute } from '../route';
import { credentialRefProblem } from '../../secrets/scenario';
import { pageQuerySchema, problemSchema } from '../schemas/common';
import {
  SERVICE_NAME_PATTERN,
  createServiceBody,
  serviceListSchema,
  serviceNameParams,
  serviceSchema,
  type CreateServiceInput,
} from '../schemas/services';

function view(s: ServiceRecord) {
  return {
    name: s.name,
    git: displayGitUrl(s.git),
    ref: s.ref,
    version: s.ref,
    credential_ref: s.credential_ref,
    created_by: s.created_by,
    created_at: s.created_at.toISOString(),
    updated_at: s.updated_at.toISOString(),
  };
}

/**
 * Any keeper of the cluster may render a run, so a `file://` path must be one every keeper sees. While
 * more than one keeper is live and the path is not declared shared storage, registering one would
 * lock every run a keeper without that path renders (issue 33): refused with the live kids and the fix.
 */
async function refuseUnsharedFileSource(
  runtime: {
    cache: Parameters<typeof liveKeepers>[0];
    config: { kid: string; temporal: { task_queue: string }; services: { git: { fileShared?: boolean } } };
  },
  git: string,
): Promise<void> {
  if (parseGitUrl(git)?.scheme !== 'file' || runtime.config.services.git.fileShared) return;
  const live = await liveKeepers(runtime.cache, runtime.config.temporal.task_queue);
  if (live.length <= 1) return;
  throw problems.conflict(
    `/body/git is a path on this keeper's disk, and ${live.length} keepers of this cluster are live (${live.join(', ')}): ` +
      'any of them may render a run, and one that cannot see the path would lock it. Serve the repository over https or ssh, ' +
      "or, if the path is on storage every keeper mounts, set services.git.file_shared: true in every keeper's config",
  );
}

export const serviceRoutes = [
  defineRoute<Record<string, never>, Record<string, never>, CreateServiceInput>({
    method: 'post',
    path: '/v1/services',
    operationId: 'createService',
    tag: 'Services',
    permission: 'services:create',
    summary: 'Register a service',
    description:
      'Adds a git repository at a ref to the catalog; the ref is its first published version, pinned to the commit it resolves to now. ' +
      'The repository is cloned, the ref resolved and the content linted first: a repository that does not exist, a ref that does not resolve or a lint error (file:line) is a 422 and nothing is stored. ' +
      "The URL's scheme and host must be allowed by the keeper's git source policy (services.git); credentials go in credential_ref, never in the URL.",
    body: { schema: createServiceBody, required: true },
    responses: {
      201: { description: 'registered', schema: serviceSchema },
      422: {
        description: 'the repository, the ref or its content is not usable',
        schema: problemSchema,
        contentType: 'application/problem+json',
      },
    },
    async handler({ body, caller, deps }) {
      // The URL is never echoed: it may carry the very credential the rule refuses.
      const refusal = gitUrlRefusal(body.git, deps.runtime.config.services.git, body.credential_ref !== undefined);
      if (refusal) throw problems.invalid(`the git URL ${refusal}`, [{ path: '/body/git', message: refusal }]);
      // The credential is read with the scenario role's token, which reaches only the scenario prefix (issue 28).
      const credentialProblem =
        body.credential_ref === undefined
          ? null
          : credentialRefProblem(body.credential_ref, deps.runtime.config.secretstore.scenario_prefix);
      if (credentialProblem)
        throw problems.invalid(`credential_ref ${credentialProblem}`, [
          { path: '/body/credential_ref', message: credentialProblem },
        ]);
      // Checked before anything is stored (422 with the reason): the repository answers, the ref
      // resolves, soul-lint finds nothing. The registered ref becomes the first published version.
      const source = { name: body.name, git: body.git, credential_ref: body.credential_ref ?? null };
      if (await getService(deps.runtime.db, body.name))
        throw problems.conflict(`service ${body.name} is already registered`);
      await refuseUnsharedFileSource(deps.runtime, body.git);
      const loaded = await deps.runs.checkedLoad(source, body.ref, '/body/ref', '/body/git');
      const service = await deps.runtime.db.transaction(async (trx) => {
        const created = await createService(trx, {
          name: body.name,
          git: body.git,
          ref: body.ref,
          createdBy: caller.aid,
          ...(body.credential_ref ? { credentialRef: body.credential_ref } : {}),
        });
        await publishVersion(trx, {
          service: created.name,
          version: body.ref,
          commit: loaded.commit,
          stateSchemaVersion: loaded.stateSchemaVersion,
          publishedBy: caller.aid,
        });
        return created;
      });
      return { status: 201, body: view(service), headers: { Location: `/v1/services/${service.name}` } };
    },
  }),
  defineRoute<Record<string, never>, { limit: number; cursor?: string }>({
    method: 'get',
    path: '/v1/services',
    operationId: 'listServices',
    tag: 'Services',
    permission: 'services:read',
    summary: 'List services',
    query: pageQuerySchema,
    responses: { 200: { description: 'services ordered by name', schema: serviceListSchema } },
    async handler({ query, deps }) {
      const after = decodeCursor(query.cursor, SERVICE_NAME_PATTERN);
      return { status: 200, body: pageBody(await listServices(deps.runtime.db, { limit: query.limit, after }), view) };
    },
  }),
  defineRoute<{ name: string }>({
    method: 'get',
    path: '/v1/services/{name}',
    operationId: 'getService',
    tag: 'Services',
    permission: 'services:read',
    summary: 'Get a service',
    params: serviceNameParams,
    responses: { 200: { description: 'the service', schema: serviceSchema } },
    async handler({ params, deps }) {
      const service = await getService(deps.runtime.db, params.name);
      if (!service) throw problems.notFound(`service ${params.name} is not in the catalog`);
      return { status: 200, body: view(service) };
    },
  }),
  defineRoute<{ name: string }>({
    method: 'delete',
    path: '/v1/services/{name}',
    operationId: 'deleteService',
    tag: 'Services',
    permission: 'services:delete',
    summary: 'Remove a service from the catalog',
    description:
      'Removes the service and its published versions (204). While an incarnation uses it the answer is 409 naming them: ' +
      'delete those first. Deleted incarnations do not count; their runs and history stay readable. Nothing on any host changes.',
    params: serviceNameParams,
    responses: {
      204: { description: 'removed' },
      409: {
        description: 'incarnations use the service (the detail names them)',
        schema: problemSchema,
        contentType: 'application/problem+json',
      },
    },
    async handler({ params, deps }) {
      await deleteService(deps.runtime.db, params.name);
      return { status: 204, body: undefined };
    },
  }),
];
