/**
 * Resolves the run's input against the scenario's declarations: unknown
 * names, missing required inputs and wrong types are render errors (SL020)
 * pointing at the declaration (or the `input:` section).
 */
import { makeError } from '../errors';
import type { Scenario } from '../model';
import { describeValue, matchesType } from '../inputs';
import { checkValue } from '../input-schema';
import type { ErrorList } from './error-list';

export const RULE_INPUT = 'SL020';

export function resolveInputs(
  s: Scenario,
  given: Record<string, unknown>,
  errors: Pick<ErrorList, 'add'>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const top = { file: s.file, line: 1, col: 1 };
  for (const name of Object.keys(given ?? {})) {
    if (!s.inputs.has(name)) {
      errors.add(
        makeError(
          top,
          RULE_INPUT,
          `input "${name}" is not declared by ${s.file}`,
          `declared inputs: ${[...s.inputs.keys()].join(', ') || '(none)'}; remove "${name}" or declare it`,
        ),
      );
    }
  }
  for (const d of s.inputs.values()) {
    const has = given !== null && given !== undefined && Object.prototype.hasOwnProperty.call(given, d.name);
    const value = has ? given[d.name] : d.default;
    if (!has && !d.hasDefault) {
      errors.add(
        makeError(
          d.pos,
          RULE_INPUT,
          `input "${d.name}" is required and has no default`,
          `pass "${d.name}" in the run's input or give it a default`,
        ),
      );
      continue;
    }
    if (!matchesType(value, d.type)) {
      errors.add(
        makeError(
          d.pos,
          RULE_INPUT,
          `input "${d.name}" must be ${d.type}, got ${describeValue(value)}`,
          `pass a ${d.type} value`,
        ),
      );
      continue;
    }
    // Inside the value (issue 30): each message starts with the path, `input.upstreams[2].port ...`.
    const inside = d.schema ? checkValue(value, d.schema, `input.${d.name}`) : [];
    for (const p of inside)
      errors.add(
        makeError(
          d.pos,
          RULE_INPUT,
          p.message,
          `see the schema of input "${d.name}" (GET /v1/services/{name}/versions/{version})`,
        ),
      );
    if (inside.length > 0) continue;
    out[d.name] = value;
  }
  return out;
}
