// The two ends of an incarnation's life besides create (issue 17 items 1 and 6):
//   upgrade  moves it to a published version of its service, forward only in state_schema_version;
//            the state migrations run in one transaction and from then on every run applies the new
//            version's pinned commit (without `version`: the state-only migration at its own version)
//   delete   runs the service's `destroy` operation as a normal run whose commit removes the record
//            (its runs and history stay readable, the name is free), or with `force` removes the
//            record at once; a service without `destroy` needs `force`, never a silent removal
import { checkPermission } from '../auth';
import { removeIncarnation } from '../../db/repos/incarnations';
import { finishRun } from '../../db/repos/runs';
import { FORCE_DELETE_INCARNATION } from '../roles';
import { purgeSecretInputs } from '../../secrets/incarnation-inputs';
import { problems } from '../problems';
import { defineRoute } from '../route';
import { acceptedSchema } from '../schemas/runs';
import {
  deletedSchema,
  deleteIncarnationQuery,
  nameParams,
  upgradeBody,
  type DeleteIncarnationQuery,
  type UpgradeInput,
} from '../schemas/incarnations';
import { dropDriftSchedule } from './drift';
import { mustIncarnation, runAnswer } from './run-start';

export const incarnationEdgeRoutes = [
  defineRoute<{ name: string }, Record<string, never>, UpgradeInput | undefined>({
    method: 'post',
    path: '/v1/incarnations/{name}/upgrade',
    operationId: 'upgradeIncarnation',
    tag: 'Incarnations',
    permission: 'incarnations:upgrade',
    summary: 'Upgrade to a version',
    description:
      'Operator-initiated, forward-only. With `version`: moves the incarnation to that published version of its service, running ' +
      "its migrations/<v>.yml from the incarnation's state_schema_version up to the one the version's commit expects, in one transaction; from then on every run applies " +
      "that version's pinned commit. A version whose state_schema_version is older than the state is refused (409). Without `version`: the state migrations at the incarnation's " +
      "own version, up to `to_version` (default: the one its commit expects). Hosts are not touched; run an operation afterwards to apply the new version. Never automatic. During the keeper's own converge run it is accepted with `waits_for` naming that run and migrates when it ends (docs/runs.md).",
    params: nameParams,
    body: { schema: upgradeBody, required: false },
    responses: { 202: { description: 'accepted', schema: acceptedSchema } },
    async handler({ params, body, caller, deps }) {
      return runAnswer(
        deps,
        await deps.runs.upgrade({
          name: params.name,
          version: body?.version,
          toVersion: body?.to_version,
          by: caller.aid,
        }),
      );
    },
  }),
  defineRoute<{ name: string }, DeleteIncarnationQuery>({
    method: 'delete',
    path: '/v1/incarnations/{name}',
    operationId: 'deleteIncarnation',
    tag: 'Incarnations',
    permission: 'incarnations:delete',
    summary: 'Delete an incarnation',
    description:
      "Runs the service's `destroy` operation (scenario/destroy/main.yml) on the incarnation's hosts as a normal run (202): " +
      'when it commits, the incarnation leaves the lists and its name is free; its runs and history stay readable. A service without `destroy` answers 409 unless ' +
      '`?force=true`, which removes the record at once without touching any host (200; needs the permission `incarnations:force-delete`).',
    params: nameParams,
    query: deleteIncarnationQuery,
    responses: {
      200: { description: 'removed with force', schema: deletedSchema },
      202: { description: 'the destroy run is accepted; the record goes when it commits', schema: acceptedSchema },
      409: {
        description:
          'the incarnation is applying or locked, or its service has no destroy operation and force was not given',
      },
    },
    async handler({ params, query, caller, deps }) {
      const db = deps.runtime.db;
      if (query.force) {
        checkPermission(caller, FORCE_DELETE_INCARNATION);
        const inc = await mustIncarnation(deps, params.name);
        await db.transaction(async (trx) => {
          // A run still holding the lock can no longer commit; its record says why.
          if (inc.current_apply_id)
            await finishRun(trx, inc.current_apply_id, {
              status: 'failed',
              error: `incarnation ${inc.name} was removed with force`,
              summary: {},
            });
          if (!(await removeIncarnation(trx, inc.name, { by: caller.aid, forced: true })))
            throw problems.notFound(`incarnation ${inc.name} does not exist`);
        });
        if (inc.drift_interval !== null) await dropDriftSchedule(deps, inc.name);
        await purgeSecretInputs(
          deps.runtime.scenarioSecrets,
          deps.runtime.config.secretstore.scenario_prefix,
          inc,
          deps.runtime.log,
        );
        return {
          status: 200,
          body: { name: inc.name, removed: true, forced: true, history: `/v1/incarnations/${inc.name}/history` },
        };
      }
      // A destroyed incarnation has nothing left to check (a check meanwhile finds it applying and skips).
      const beforeLock = async (inc: { name: string; drift_interval: string | null }) => {
        if (inc.drift_interval !== null) await dropDriftSchedule(deps, inc.name);
      };
      return runAnswer(deps, await deps.runs.delete({ name: params.name, by: caller.aid, beforeLock }));
    },
  }),
];
