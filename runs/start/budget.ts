// An operator's failure budget for one run (`max_failed` in POST .../runs, `keeperctl incarnations
// run --max-failed`): within what the scenario's `max_failed:` allows, never more (docs/runs.md
// "Failure budget"). A larger one is refused up front, naming the field; nothing is recorded.
import type { LoadedService } from '../../scenario/model';
import { overBudget, parseBudget, showBudget } from '../../scenario/budget';
import { refuse } from './outcome';

/** The run's `max_failed` as stored, or undefined when the operator gave none. */
export function checkRunBudget(
  loaded: unknown,
  operation: string,
  asked: string | number | undefined,
): string | undefined {
  if (asked === undefined) return undefined;
  const spec = parseBudget(asked);
  if (typeof spec === 'string')
    throw refuse.invalid(`max_failed ${JSON.stringify(asked)} ${spec}`, [{ path: '/body/max_failed', message: spec }]);
  // What the runs' scenario port loaded (runs/activities/scenario-adapter.ts): the commit and the service.
  const declared = (loaded as { service?: LoadedService }).service?.scenarios?.get(operation)?.maxFailed;
  const allowed = declared ? parseBudget(declared.value) : undefined;
  const limit = typeof allowed === 'string' ? undefined : allowed;
  if (overBudget(spec, limit)) {
    const message = `must be at most the scenario's max_failed (${showBudget(limit)})`;
    throw refuse.invalid(`max_failed ${showBudget(spec)} is more than scenario ${operation} allows: ${message}`, [
      { path: '/body/max_failed', message },
    ]);
  }
  return showBudget(spec);
}
