// The middle of every start that renders an operation (a run, a plan, a create, the plan of a
// create): check what is knowable and seal the secret inputs, with one load of the service shared
// by both, so the check a plan passes is the check its run passes.
import type { IncarnationRecord } from '../../db/repos/incarnations';
import { lastCommittedInput } from '../../db/repos/runs-carryover';
import type { ServiceRecord } from '../../db/repos/services';
import type { ServiceVersionRecord } from '../../db/repos/service-versions';
import { mergeInput, type InputMode } from '../../scenario/input-merge';
import type { LoadedService } from '../activities/scenario-port';
import { precheck } from './checks';
import type { RunServiceDeps } from './context';
import { sealInputs } from './launch';

export interface Start {
  operation: string;
  /** The run's apply_id or the plan's plan_id: what sealed secret inputs are filed under. */
  id: string;
  input: Record<string, unknown>;
  covens: string[];
  allowEmpty: boolean;
  /** The field a "no soul in the covens" refusal names. */
  covensPath: string;
}

/** Where the sealed inputs live: an existing incarnation (whose committed state the version must match), or the name and secrets key of one a create will make. */
export type StartTarget = { existing: IncarnationRecord } | { created: { name: string; secrets_key: string } };

export async function checkAndSeal(
  deps: RunServiceDeps,
  service: ServiceRecord,
  version: Pick<ServiceVersionRecord, 'version' | 'commit'>,
  target: StartTarget,
  start: Start,
  /** A check that needs the loaded service (a run's failure budget): it runs before anything is written to the secrets store. */
  beforeSeal?: (loaded: LoadedService) => void,
) {
  const existing = 'existing' in target ? target.existing : undefined;
  const loaded = await precheck(deps, service, {
    operation: start.operation,
    input: start.input,
    covens: start.covens,
    allowEmpty: start.allowEmpty,
    covensPath: start.covensPath,
    version: { name: version.version, commit: version.commit },
    ...(existing ? { incarnation: existing } : {}),
  });
  beforeSeal?.(loaded);
  const holder = existing ?? ('created' in target ? target.created : undefined)!;
  const input = await sealInputs(
    deps,
    { ...service, ref: version.commit },
    holder,
    start.operation,
    start.id,
    start.input,
    loaded,
  );
  return { input, loaded };
}

/** The input of a run or plan of an existing incarnation: merged over its last committed run's (docs/runs.md "Input: one key at a time"). */
export async function inputOver(
  deps: RunServiceDeps,
  inc: IncarnationRecord,
  input: Record<string, unknown> | undefined,
  mode: InputMode | undefined,
): Promise<Record<string, unknown>> {
  return mergeInput(await lastCommittedInput(deps.db, inc.last_committed_apply_id), input, mode).input;
}
