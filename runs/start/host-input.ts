// Per-host input at a start (issue 47, scenario/host-input.ts): each coven's and each sid's layer is
// checked by the operation's declarations merged over the run's input, as the host would get it,
// before anything is recorded. A bad value is refused naming the coven or host, the field path and
// the rule. A secret input takes a reference only (secretstore:<path>#<field>): a value would have
// to be written to the store on behalf of one host, and a per-host value never enters a response.
import { parseReference } from '../../common/secret';
import { setHostInput, type IncarnationRecord } from '../../db/repos/incarnations';
import { getRun } from '../../db/repos/runs';
import { runTargets } from '../../db/repos/targets';
import { declaredOnly, hasHostInput, hostLayer, inputFor, type HostInput } from '../../scenario/host-input';
import { scenarioPathProblem } from '../../secrets/scenario';
import type { LoadedService } from '../activities/scenario-port';
import { scenarioOf, type RunServiceDeps } from './context';
import { refuse, type FieldProblem } from './outcome';
import { loadChecked } from './checks';
import { mustIncarnation, serviceOf, versionToApply } from './source';

const pointer = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');

export interface HostInputCheck {
  operation: string;
  /** The run's input (already checked) the layers are merged over. */
  input: Record<string, unknown>;
  hostInput: HostInput | null | undefined;
  /** The incarnation's covens: a coven entry must name one, and they order the coven layers. */
  covens: string[];
  /** Where the per-host input is, as a JSON pointer: `/body/host_input`, or the incarnation's for a run. */
  field: string;
  /** At create and when set: a key the operation does not declare is refused. At a run's start it is left out (declaredOnly). */
  strict: boolean;
  scenarioPrefix: string;
}

export async function checkHostInput(deps: RunServiceDeps, loaded: LoadedService, c: HostInputCheck): Promise<void> {
  if (!hasHostInput(c.hostInput)) return;
  const h = c.hostInput;
  const problems: FieldProblem[] = [];
  for (const coven of Object.keys(h.covens ?? {}))
    if (!c.covens.includes(coven))
      problems.push({
        path: `${c.field}/covens/${pointer(coven)}`,
        message: `coven ${coven}: not one of the incarnation's covens (${c.covens.join(', ')})`,
      });
  if (problems.length > 0) throw refuse.invalid(problems.map((p) => p.message).join('; '), problems);

  const declared = new Set(
    (loaded.operations ?? []).find((o) => o.name === c.operation)?.inputs.map((i) => i.name) ?? [],
  );
  const secret = new Set(loaded.secretInputs?.[c.operation] ?? []);
  const scenario = scenarioOf(deps);
  // A sid's layer is checked as that host gets it: over its covens' layers when it is a soul of the covens.
  const souls = new Map((await runTargets(deps.db, c.covens)).targets.map((t) => [t.sid, t.covens]));
  const entries: { label: string; at: string; own: Record<string, unknown>; layer: Record<string, unknown> }[] = [];
  for (const [coven, own] of Object.entries(h.covens ?? {}))
    entries.push({ label: `coven ${coven}`, at: `${c.field}/covens/${pointer(coven)}`, own, layer: own });
  for (const [sid, own] of Object.entries(h.hosts ?? {}))
    entries.push({
      label: `host ${sid}`,
      at: `${c.field}/hosts/${pointer(sid)}`,
      own,
      layer: hostLayer(h, { sid, covens: souls.get(sid) ?? [] }, c.covens) ?? own,
    });
  for (const e of entries) {
    const layer = c.strict ? e.layer : declaredOnly(e.layer, declared);
    if (!layer) continue;
    for (const [name, v] of Object.entries(e.own)) {
      if (!secret.has(name) || v === null || (!c.strict && !declared.has(name))) continue;
      const why =
        typeof v !== 'string' || !v.startsWith('secretstore:')
          ? 'a secret input takes a reference secretstore:<path>#<field> here, not a value'
          : !parseReference(v)
            ? 'not a secretstore:<path>#<field> reference'
            : scenarioPathProblem(parseReference(v)!.path, c.scenarioPrefix);
      if (why) problems.push({ path: `${e.at}/${pointer(name)}`, message: `${e.label}: input "${name}": ${why}` });
    }
    for (const p of scenario.checkRun({ service: loaded, operation: c.operation, input: inputFor(c.input, layer) }))
      problems.push({
        path: p.path.startsWith('/body/input') ? `${e.at}${p.path.slice('/body/input'.length)}` : e.at,
        message: `${e.label}: ${p.message}`,
      });
  }
  if (problems.length > 0)
    throw refuse.invalid(`per-host input refused: ${problems.map((p) => p.message).join('; ')}`, problems);
}

/**
 * Replaces an incarnation's per-host input (PUT /v1/incarnations/{name}/host-input), checked against
 * the operation and input of its last committed run (its `create` before one committed), at its
 * version. Nothing runs: the next run or plan renders with it.
 */
export async function updateHostInput(
  deps: RunServiceDeps,
  name: string,
  hostInput: HostInput | null,
): Promise<IncarnationRecord> {
  const inc = await mustIncarnation(deps, name);
  const service = await serviceOf(deps, inc.service);
  const version = await versionToApply(deps, service, inc.service_version, '/body');
  const loaded = await loadChecked(deps, service, '/body', version.commit);
  const last = await getRun(deps.db, inc.last_committed_apply_id ?? inc.last_apply_id ?? '');
  const known = new Set((loaded.operations ?? []).map((o) => o.name));
  const operation = last && known.has(last.operation) ? last.operation : 'create';
  await checkHostInput(deps, loaded, {
    operation,
    input: last && last.operation === operation ? last.input : {},
    hostInput,
    covens: inc.covens,
    field: '/body',
    strict: true,
    scenarioPrefix: deps.config.secretstore.scenario_prefix,
  });
  return setHostInput(deps.db, inc.name, hostInput);
}

/** The stored per-host input of an existing incarnation, as a run or plan of `operation` with `input` checks it. */
export function incarnationHostInput(
  deps: RunServiceDeps,
  inc: IncarnationRecord,
  operation: string,
  input: Record<string, unknown>,
) {
  return {
    operation,
    input,
    hostInput: inc.host_input,
    covens: inc.covens,
    field: '/incarnation/host_input',
    strict: false,
    scenarioPrefix: deps.config.secretstore.scenario_prefix,
  };
}
