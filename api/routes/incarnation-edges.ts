// The two ends of an incarnation's life besides create (issue 17 items 1 and 6):
//   upgrade  moves it to a published version of its service, forward only in state_schema_version;
//            the state migrations run in one transaction and from then on every run applies the new
//            version's pinned commit (without `version`: the state-only migration at its own version)
//   delete   runs the service's `destroy` operation as a normal run whose commit removes the record
//            (its runs and history stay readable, the name is free), or with `force` removes the
//            record at once; a service without `destroy` needs `force`, never a silent removal
import { checkPermission } from '../auth';
import { beginRun, removeIncarnation } from '../../db/repos/incarnations';
import { DESTROY } from '../../db/repos/run-outcome';
import { finishRun, lastCommittedInput } from '../../db/repos/runs';
import { newApplyId, startUpgradeWorkflow } from '../../runs/client';
import { FORCE_DELETE_INCARNATION } from '../roles';
import { purgeSecretInputs } from '../../secrets/incarnation-inputs';
import { problems } from '../problems';
import { defineRoute } from '../route';
import {
  acceptedSchema, deletedSchema, deleteIncarnationQuery, nameParams, upgradeBody, type DeleteIncarnationQuery, type UpgradeInput,
} from '../schemas/incarnations';
import { dropDriftSchedule } from './drift';
import { launch, mustIncarnation, pinned, sealInputs, serviceOf, startRun, temporalOf } from './run-start';
import { loadChecked, precheck, scenarioOf } from './run-checks';
import { versionToApply } from './service-source';

export const incarnationEdgeRoutes = [
  defineRoute<{ name: string }, Record<string, never>, UpgradeInput | undefined>({
    method: 'post', path: '/v1/incarnations/{name}/upgrade', operationId: 'upgradeIncarnation', tag: 'Incarnations', permission: 'incarnations:upgrade',
    summary: 'Upgrade to a version', description: "Operator-initiated, forward-only. With `version`: moves the incarnation to that published version of its service, running " +
      "its migrations/<v>.yml from the incarnation's state_schema_version up to the one the version's commit expects, in one transaction; from then on every run applies " +
      "that version's pinned commit. A version whose state_schema_version is older than the state is refused (409). Without `version`: the state migrations at the incarnation's " +
      'own version, up to `to_version` (default: the one its commit expects). Hosts are not touched; run an operation afterwards to apply the new version. Never automatic.',
    params: nameParams, body: { schema: upgradeBody, required: false },
    responses: { 202: { description: 'accepted', schema: acceptedSchema } },
    async handler({ params, body, caller, deps }) {
      temporalOf(deps);
      const inc = await mustIncarnation(deps, params.name);
      if (body?.version !== undefined && body.to_version !== undefined) {
        throw problems.invalid('give either version (a published version) or to_version (a state migration at the current version), not both', [{ path: '/body/to_version', message: 'not with version' }]);
      }
      if (body?.to_version !== undefined && inc.state_schema_version !== null && body.to_version < inc.state_schema_version) {
        throw problems.invalid(`state migrations are forward only: the state is at version ${inc.state_schema_version}`, [{ path: '/body/to_version', message: 'older than the current version' }]);
      }
      const service = await serviceOf(deps, inc.service);
      const target = body?.version !== undefined
        ? await versionToApply(deps, service, body.version, '/body/version', { mustExist: true, notYanked: true })
        : await versionToApply(deps, service, inc.service_version, '/body/to_version');
      if (inc.state_schema_version !== null && target.state_schema_version < inc.state_schema_version) {
        throw problems.conflict(`upgrades are forward only: incarnation ${inc.name}'s state is at state_schema_version ${inc.state_schema_version}, ` +
          `version ${target.version} expects ${target.state_schema_version} (an older schema)`);
      }
      if (body?.to_version !== undefined && body.to_version > target.state_schema_version) {
        throw problems.invalid(`service ${service.name}@${target.version} knows state schema versions up to ${target.state_schema_version}; ${body.to_version} is not one of them`,
          [{ path: '/body/to_version', message: `must be at most ${target.state_schema_version}, the service's state_schema_version` }]);
      }
      if (body?.to_version !== undefined) await loadChecked(deps, scenarioOf(deps), service, '/body/to_version', target.commit);
      const run = { applyId: newApplyId(inc.name, 'upgrade'), incarnation: inc.name, operation: 'upgrade', input: {}, ...pinned(target), createdBy: caller.aid, service: service.name };
      await beginRun(deps.runtime.db, inc.name, run);
      return launch(deps, run, (t) => startUpgradeWorkflow(t, { ...run, toVersion: body?.to_version ?? null }));
    },
  }),
  defineRoute<{ name: string }, DeleteIncarnationQuery>({
    method: 'delete', path: '/v1/incarnations/{name}', operationId: 'deleteIncarnation', tag: 'Incarnations', permission: 'incarnations:delete',
    summary: 'Delete an incarnation', description: "Runs the service's `destroy` operation (scenario/destroy/main.yml) on the incarnation's hosts as a normal run (202): " +
      'when it commits, the incarnation leaves the lists and its name is free; its runs and history stay readable. A service without `destroy` answers 409 unless ' +
      '`?force=true`, which removes the record at once without touching any host (200; needs the permission `incarnations:force-delete`).',
    params: nameParams, query: deleteIncarnationQuery,
    responses: {
      200: { description: 'removed with force', schema: deletedSchema },
      202: { description: 'the destroy run is accepted; the record goes when it commits', schema: acceptedSchema },
      409: { description: 'the incarnation is applying or locked, or its service has no destroy operation and force was not given' },
    },
    async handler({ params, query, caller, deps }) {
      const db = deps.runtime.db;
      if (query.force) {
        checkPermission(caller, FORCE_DELETE_INCARNATION);
        const inc = await mustIncarnation(deps, params.name);
        await db.transaction(async (trx) => {
          // A run still holding the lock can no longer commit; its record says why.
          if (inc.current_apply_id) await finishRun(trx, inc.current_apply_id, { status: 'failed', error: `incarnation ${inc.name} was removed with force`, summary: {} });
          if (!(await removeIncarnation(trx, inc.name, { by: caller.aid, forced: true }))) throw problems.notFound(`incarnation ${inc.name} does not exist`);
        });
        if (inc.drift_interval !== null) await dropDriftSchedule(deps, inc.name);
        await purgeSecretInputs(deps.runtime.scenarioSecrets, deps.runtime.config.secretstore.scenario_prefix, inc, deps.runtime.log);
        return { status: 200, body: { name: inc.name, removed: true, forced: true, history: `/v1/incarnations/${inc.name}/history` } };
      }
      temporalOf(deps);
      const inc = await mustIncarnation(deps, params.name);
      const service = await serviceOf(deps, inc.service);
      const version = await versionToApply(deps, service, inc.service_version, '/query/force');
      const loaded = await loadChecked(deps, scenarioOf(deps), service, '/query/force', version.commit);
      const destroy = (loaded.operations ?? []).find((o) => o.name === DESTROY);
      if (!destroy) {
        throw problems.conflict(`service ${service.name}@${version.version} has no destroy operation (scenario/destroy/main.yml): ` +
          `pass ?force=true to remove the record of incarnation ${inc.name} without running anything (its hosts keep what was applied)`);
      }
      const applyId = newApplyId(inc.name, DESTROY);
      // destroy runs with the inputs it declares, taken from the input the incarnation was last committed with.
      const declared = new Set(destroy.inputs.map((i) => i.name));
      const last = (await lastCommittedInput(db, inc.last_committed_apply_id)) ?? {};
      const given = Object.fromEntries(Object.entries(last).filter(([k]) => declared.has(k)));
      const checked = await precheck(deps, service, {
        operation: DESTROY, input: given, covens: inc.covens, allowEmpty: true, covensPath: '/query/force',
        version: { name: version.version, commit: version.commit }, incarnation: inc,
      });
      const input = await sealInputs(deps, { ...service, ref: version.commit }, inc, DESTROY, applyId, given, checked);
      const run = { applyId, incarnation: inc.name, operation: DESTROY, input, ...pinned(version), createdBy: caller.aid, service: service.name };
      // A destroyed incarnation has nothing left to check (a check meanwhile finds it applying and skips).
      if (inc.drift_interval !== null) await dropDriftSchedule(deps, inc.name);
      await beginRun(db, inc.name, run);
      return startRun(deps, run);
    },
  }),
];
