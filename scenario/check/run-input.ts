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
  /** One per input name at fault, with the rule it breaks; `at` is the path inside the value (["upstreams", 2, "port"]). */
  problems: { name: string; message: string; at?: (string | number)[] }[];
}

/** `input.upstreams[2].port must ...` → ["upstreams", 2, "port"] (the path scenario/input-schema.ts writes). */
const PATH = /^input((?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\]|\["(?:[^"\\]|\\.)*"\])+)/;
function pathOf(message: string): (string | number)[] | undefined {
  const m = PATH.exec(message);
  if (!m) return undefined;
  return [...m[1]!.matchAll(/\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g)].map(
    (p) => p[1] ?? (p[2] !== undefined ? Number(p[2]) : (JSON.parse(p[3]!) as string)),
  );
}

export function checkRunInput(
  service: LoadedService,
  operation: string,
  input: Record<string, unknown>,
): RunInputCheck {
  const scenario = service.scenarios.get(operation);
  if (!scenario) return { operation: false, problems: [] };
  const problems: RunInputCheck['problems'] = [];
  resolveInputs(scenario, input, {
    add: (e: RenderError) => {
      const at = pathOf(e.message);
      problems.push(
        at
          ? { name: String(at[0]), message: e.message, at }
          : { name: /input "([^"]+)"/.exec(e.message)?.[1] ?? '', message: e.message },
      );
    },
  });
  return { operation: true, problems };
}
