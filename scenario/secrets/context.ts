/**
 * `secretstore("<path>", "<field>")` in CEL. Render is synchronous, so the
 * render's secret context (its record and the policy) is installed for the
 * duration of one render and read by the function, which checks the literal
 * path and records it; outside render (apply-time
 * expressions, the soul) the function refuses. The policy: a path must lie
 * under the keeper's `secretstore.scenario_prefix` and under one of the
 * prefixes the service declares in service.yml `secrets:`.
 */
import { refProblem, underPrefix, type SecretRef } from '../../common/secret';
import type { SecretRecord } from './record';

export const RULE_SECRET_PATH = 'SL023';
export const RULE_SECRET_USE = 'SL024';

export interface SecretPolicy {
  /** The keeper's `secretstore.scenario_prefix`; absent offline (soul-lint), where only the service's prefixes are known. */
  keeperPrefix?: string;
  /** service.yml `secrets:`. */
  servicePrefixes: string[];
}

interface Active {
  record: SecretRecord;
  policy: SecretPolicy;
}

let active: Active | undefined;

export function withSecretContext<T>(ctx: Active, fn: () => T): T {
  const outer = active;
  active = ctx;
  try {
    return fn();
  } finally {
    active = outer;
  }
}

/** Why `ref` may not be read under `policy` (the message names the path and the rule), or null. */
export function policyProblem(ref: SecretRef, policy: SecretPolicy, extraPrefixes: string[] = []): string | null {
  const bad = refProblem(ref.path, ref.field);
  if (bad) return bad;
  if (policy.keeperPrefix !== undefined && !underPrefix(ref.path, policy.keeperPrefix)) {
    return `${ref.path} is outside the keeper's secretstore.scenario_prefix "${policy.keeperPrefix}"`;
  }
  const allowed = [...policy.servicePrefixes, ...extraPrefixes];
  if (!allowed.some((p) => underPrefix(ref.path, p))) {
    return `${ref.path} is outside the prefixes the service declares in service.yml \`secrets:\` (${policy.servicePrefixes.length ? policy.servicePrefixes.join(', ') : 'none declared'})`;
  }
  return null;
}

/** The CEL function's body. Its error text carries the rule id so render can report it under SL023. */
export function secretstoreFunction(path: string, field: string): string {
  const call = `secretstore(${JSON.stringify(path)}, ${JSON.stringify(field)})`;
  if (!active)
    throw new Error(`${call} is evaluated at render only, not in apply-time expressions [${RULE_SECRET_PATH}]`);
  const problem = policyProblem({ path, field }, active.policy);
  if (problem) throw new Error(`${call}: ${problem} [${RULE_SECRET_PATH}]`);
  return active.record.issue({ path, field });
}
