// Before a run starts, the service checks what it can know (docs/runs.md "Refused before it starts"):
// the service loads, the operation exists, the input resolves, the covens hold an onboarded soul.
// Each refusal is `invalid` naming the field; nothing is recorded.
import { runTargets } from '../../db/repos/targets';
import type { ServiceRecord } from '../../db/repos/services';
import { displayGitUrl } from '../../scenario/load/git-policy';
import type { LoadedService } from '../activities/scenario-port';
import { schemaMismatch } from '../schema-guard';
import { scenarioOf, type RunServiceDeps } from './context';
import { refuse } from './outcome';

/** One load at a time per repository from this keeper (concurrent fetches into one mirror contend
 *  for git's ref locks); a failure is retried once before it becomes a refusal. */
const loading = new Map<string, Promise<unknown>>();

/** Loads `ref` (default: the catalog ref; a run passes its version's pinned commit); a failure is thrown as it is. */
export async function loadSerialized(
  deps: RunServiceDeps,
  service: Pick<ServiceRecord, 'git' | 'ref' | 'credential_ref'>,
  ref = service.ref,
) {
  const scenario = scenarioOf(deps);
  const load = () =>
    scenario.loadService({
      git: service.git,
      ref,
      cacheDir: deps.config.services.cache_dir,
      credentialRef: service.credential_ref ?? undefined,
    });
  const prev = loading.get(service.git) ?? Promise.resolve();
  const mine = prev
    .catch(() => undefined)
    .then(async () => {
      try {
        return await load();
      } catch {
        await new Promise((r) => setTimeout(r, 250));
        return load();
      }
    });
  loading.set(service.git, mine);
  try {
    return await mine;
  } finally {
    if (loading.get(service.git) === mine) loading.delete(service.git);
  }
}

export async function loadChecked(deps: RunServiceDeps, service: ServiceRecord, field: string, ref = service.ref) {
  try {
    return await loadSerialized(deps, service, ref);
  } catch (err) {
    throw refuse.invalid(
      `service ${service.name} cannot be loaded from ${displayGitUrl(service.git)}@${ref}: ${(err as Error).message}`,
      [{ path: field, message: 'the service does not load' }],
    );
  }
}

/**
 * What is knowable before a run starts, checked before anything is recorded (docs/runs.md
 * "Refused before it starts"): the service loads, the operation names one of its scenarios, the
 * input resolves (declared names, required inputs, types), and the covens hold at least one
 * onboarded soul unless the caller asked for an empty run. Each refusal names the field.
 */
export async function precheck(
  deps: RunServiceDeps,
  service: ServiceRecord,
  run: {
    operation: string;
    input: Record<string, unknown>;
    covens: string[];
    allowEmpty: boolean;
    covensPath: string;
    /** The version the run applies and its pinned commit; `incarnation` (absent for a create) has committed state to match. */
    version?: { name: string; commit?: string };
    incarnation?: { name: string; state_schema_version: number | null };
  },
  already?: LoadedService,
) {
  const scenario = scenarioOf(deps);
  // A caller that loaded the version already (delete, to find `destroy`) passes it: one load per run start.
  const loaded =
    already ??
    (await loadChecked(deps, service, '/body/service', run.version?.commit ?? run.version?.name ?? service.ref));
  const mismatch = run.incarnation && schemaMismatch(run.incarnation, run.version?.name ?? service.ref, loaded);
  if (mismatch)
    throw refuse.invalid(mismatch, [
      { path: '/body/operation', message: 'the version expects another state_schema_version than the committed state' },
    ]);
  const found = scenario.checkRun({ service: loaded, operation: run.operation, input: run.input });
  if (found.length > 0) throw refuse.invalid(found.map((p) => p.message).join('; '), found);
  // The same question render asks (db/repos/targets.ts): revoked and never-onboarded souls are not targets.
  if (!run.allowEmpty && (await runTargets(deps.db, run.covens)).targets.length === 0) {
    throw refuse.invalid(
      `no onboarded soul carries any of the covens ${run.covens.join(', ')}: the run would target no host; pass "allow_empty": true to run it anyway`,
      [{ path: run.covensPath, message: 'matches no onboarded soul' }],
    );
  }
  // The caller seals secret inputs with the same load (one git fetch per run start, not two).
  return loaded;
}
