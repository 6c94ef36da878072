// Forward-only state migration (interface spec 9.4, ARCHITECTURE 3): migrations/<v>.yml from the
// incarnation's state_schema_version up to the target, then one transaction commits the state,
// its new version and a history snapshot. Only ever started by POST .../upgrade.
import type { Knex } from 'knex';
import { commitState, getIncarnation } from '../../db/repos/incarnations';
import { finishRun, getRun, setRunServiceCommit } from '../../db/repos/runs';
import { getService } from '../../db/repos/services';
import type { SharedActivityDeps } from './deps';
import { MigrationFailed, RunGone } from './errors';

export async function upgradeState(
  deps: SharedActivityDeps,
  applyId: string,
  toVersion: number | null,
): Promise<{ version: number }> {
  const { db, scenario } = deps;
  const run = await getRun(db, applyId);
  if (!run) throw RunGone(applyId);
  const inc = await getIncarnation(db, run.incarnation);
  const service = inc && (await getService(db, inc.service));
  if (!inc || !service) throw RunGone(applyId);
  // The target version's pinned commit (recorded on the run by the API), not what its ref points at now.
  const loaded = await scenario.loadService({
    git: service.git,
    ref: run.service_commit ?? run.service_ref ?? service.ref,
    cacheDir: deps.cacheDir,
    credentialRef: service.credential_ref ?? undefined,
  });
  const from = inc.state_schema_version ?? 1;
  const to = toVersion ?? loaded.stateSchemaVersion;
  if (to < from)
    throw MigrationFailed(`state migrations are forward only: the state is at version ${from}, ${to} is older`);
  if (to > loaded.stateSchemaVersion)
    throw MigrationFailed(
      `service ${service.name}@${run.service_ref ?? service.ref} only knows state schema versions up to ${loaded.stateSchemaVersion}`,
    );
  let state: Record<string, unknown>;
  try {
    state =
      to === from
        ? inc.state
        : await scenario.migrate({ service: loaded, state: inc.state, fromVersion: from, toVersion: to });
  } catch (err) {
    throw MigrationFailed(`migration from version ${from} to ${to} failed: ${(err as Error).message}`);
  }
  await db.transaction(async (trx: Knex.Transaction) => {
    const ok = await commitState(trx, inc.name, applyId, {
      operation: 'upgrade',
      state,
      stateSchemaVersion: to,
      serviceCommit: loaded.commit,
      serviceVersion: run.service_ref,
      snapshot: to !== from || inc.service_version !== run.service_ref,
    });
    if (!ok) throw RunGone(applyId);
    await setRunServiceCommit(trx, applyId, loaded.commit);
    await finishRun(trx, applyId, { status: 'succeeded', summary: { from_version: from, to_version: to } });
  });
  return { version: to };
}
