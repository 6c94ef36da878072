// Before a run starts, the API checks what it can know (docs/runs.md "Refused before it starts"):
// the service loads, the operation exists, the input resolves, the covens hold an onboarded soul.
// Each refusal is a 400 naming the field; nothing is recorded.
import { countTargetable } from '../../db/repos/incarnations';
import type { ServiceRecord } from '../../db/repos/services';
import { displayGitUrl } from '../../scenario/load/git-policy';
import { schemaMismatch } from '../../runs/schema-guard';
import type { ApiDeps } from '../deps';
import { problems } from '../problems';

/** What the API asks of the scenario engine before it starts a run (the runs' ScenarioPort has this shape). */
export interface RunChecker {
  loadService(args: { git: string; ref: string; cacheDir: string; credentialRef?: string }): Promise<{
    commit: string; name: string; stateSchemaVersion: number; secretInputs?: Record<string, string[]>;
    errors?: { file: string; line: number; col: number; rule: string; message: string }[];
    operations?: { name: string; inputs: { name: string; type: string; required: boolean; default?: unknown; secret: boolean; schema?: object }[] }[];
  }>;
  checkRun(args: { service: never; operation: string; input: Record<string, unknown> }): { path: string; message: string }[];
}

/** One load at a time per repository from this API (concurrent fetches into one mirror contend
 *  for git's ref locks); a failure is retried once before it becomes a 400. */
const loading = new Map<string, Promise<unknown>>();

/** Loads `ref` (default: the catalog ref; a run passes its version's pinned commit); a failure is thrown as it is. */
export async function loadSerialized(deps: ApiDeps, scenario: RunChecker, service: Pick<ServiceRecord, 'git' | 'ref' | 'credential_ref'>, ref = service.ref) {
  const load = () => scenario.loadService({ git: service.git, ref, cacheDir: deps.runtime.config.services.cache_dir, credentialRef: service.credential_ref ?? undefined });
  const prev = loading.get(service.git) ?? Promise.resolve();
  const mine = prev.catch(() => undefined).then(async () => {
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

export async function loadChecked(deps: ApiDeps, scenario: RunChecker, service: ServiceRecord, field: string, ref = service.ref) {
  try {
    return await loadSerialized(deps, scenario, service, ref);
  } catch (err) {
    throw problems.invalid(`service ${service.name} cannot be loaded from ${displayGitUrl(service.git)}@${ref}: ${(err as Error).message}`, [{ path: field, message: 'the service does not load' }]);
  }
}

/**
 * What is knowable before a run starts, checked before anything is recorded (docs/runs.md
 * "Refused before it starts"): the service loads, the operation names one of its scenarios, the
 * input resolves (declared names, required inputs, types), and the covens hold at least one
 * onboarded soul unless the caller asked for an empty run. Each refusal is a 400 naming the field.
 */
export async function precheck(deps: ApiDeps, service: ServiceRecord, run: {
  operation: string; input: Record<string, unknown>; covens: string[]; allowEmpty: boolean; covensPath: string;
  /** The version the run applies and its pinned commit; `incarnation` (absent for a create) has committed state to match. */
  version?: { name: string; commit?: string }; incarnation?: { name: string; state_schema_version: number | null };
}) {
  const scenario = scenarioOf(deps);
  const loaded = await loadChecked(deps, scenario, service, '/body/service', run.version?.commit ?? run.version?.name ?? service.ref);
  const mismatch = run.incarnation && schemaMismatch(run.incarnation, run.version?.name ?? service.ref, loaded);
  if (mismatch) throw problems.invalid(mismatch, [{ path: '/body/operation', message: 'the version expects another state_schema_version than the committed state' }]);
  const found = scenario.checkRun({ service: loaded as never, operation: run.operation, input: run.input });
  if (found.length > 0) throw problems.invalid(found.map((p) => p.message).join('; '), found);
  if (!run.allowEmpty && await countTargetable(deps.runtime.db, run.covens) === 0) {
    throw problems.invalid(`no onboarded soul carries any of the covens ${run.covens.join(', ')}: the run would target no host; pass "allow_empty": true to run it anyway`,
      [{ path: run.covensPath, message: 'matches no onboarded soul' }]);
  }
  // The caller seals secret inputs with the same load (one git fetch per run start, not two).
  return loaded;
}

/** The scenario engine the keeper passes beside the common API deps (keeper/server.ts). */
export function scenarioOf(deps: ApiDeps): RunChecker {
  const s = (deps as ApiDeps & { scenario?: RunChecker }).scenario;
  if (!s) throw problems.unavailable('the scenario engine');
  return s;
}
