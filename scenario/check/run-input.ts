/**
 * The part of a run that is known before it starts: the operation names a
 * scenario, and the input resolves against its declarations (unknown names,
 * required inputs without a value, types). The keeper's API answers 400 with
 * these instead of starting a run that would lock at render.
 */
import type { RenderError } from '../errors';
import type { LoadedService } from '../model';
import { resolveInputs } from '../render/inputs';

export interface RunInputCheck {
  /** False when the service has no scenario for the operation. */
  operation: boolean;
  /** One per input name at fault, with the rule it breaks. */
  problems: { name: string; message: string }[];
}

export function checkRunInput(service: LoadedService, operation: string, input: Record<string, unknown>): RunInputCheck {
  const scenario = service.scenarios.get(operation);
  if (!scenario) return { operation: false, problems: [] };
  const problems: RunInputCheck['problems'] = [];
  resolveInputs(scenario, input, {
    add: (e: RenderError) => problems.push({ name: /input "([^"]+)"/.exec(e.message)?.[1] ?? '', message: e.message }),
  });
  return { operation: true, problems };
}
