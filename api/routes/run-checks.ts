// Before a run starts, the API checks what it can know (docs/runs.md "Refused before it starts"):
// the service loads, the operation exists, the input resolves, the covens hold an onboarded soul.
// Each refusal is a 400 naming the field; nothing is recorded.
import { countTargetable } from '../../db/repos/incarnations';
import type { ServiceRecord } from '../../db/repos/services';
import type { ApiDeps } from '../deps';
import { problems } from '../problems';

/** What the API asks of the scenario engine before it starts a run (the runs' ScenarioPort has this shape). */
export interface RunChecker {
  loadService(args: { git: string; ref: string; cacheDir: string; credentialRef?: string }): Promise<{ name: string; stateSchemaVersion: number; secretInputs?: Record<string, string[]> }>;
  checkRun(args: { service: never; operation: string; input: Record<string, unknown> }): { path: string; message: string }[];
}

/** One load at a time per repository from this API (concurrent fetches into one mirror contend
 *  for git's ref locks); a failure is retried once before it becomes a 400. */
const loading = new Map<string, Promise<unknown>>();

export async function loadChecked(deps: ApiDeps, scenario: RunChecker, service: ServiceRecord, field: string) {
  const load = () => scenario.loadService({ git: service.git, ref: service.ref, cacheDir: deps.runtime.config.services.cache_dir, credentialRef: service.credential_ref ?? undefined });
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
  } catch (err) {
    throw problems.invalid(`service ${service.name} cannot be loaded from ${service.git}@${service.ref}: ${(err as Error).message}`, [{ path: field, message: 'the service does not load' }]);
  } finally {
    if (loading.get(service.git) === mine) loading.delete(service.git);
  }
}

/**
 * What is knowable before a run starts, checked before anything is recorded (docs/runs.md
 * "Refused before it starts"): the service loads, the operation names one of its scenarios, the
 * input resolves (declared names, required inputs, types), and the covens hold at least one
 * onboarded soul unless the caller asked for an empty run. Each refusal is a 400 naming the field.
 */
export async function precheck(deps: ApiDeps, service: ServiceRecord, run: { operation: string; input: Record<string, unknown>; covens: string[]; allowEmpty: boolean; covensPath: string }) {
  const scenario = scenarioOf(deps);
  const loaded = await loadChecked(deps, scenario, service, '/body/service');
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
