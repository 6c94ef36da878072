// Secrets in a one-off execution's parameters (issue 34, docs/executions.md "Secrets"). The core
// modules' parameters carry no secret typing, so the rule is by form: a parameter string (at any
// depth: a list item, a map value) that is exactly `secretstore:<path>#<field>` is a reference. It
// is checked when the execution is asked for (canonical, under secretstore.scenario_prefix, the one
// subtree the keeper's scenario token reads) and stored, shown and audited as that text; the value is
// read from the store by the keeper dispatching to a host, just before it sends, and handed to the
// hub as a SecretValue that only the encoding for that soul's own stream reveals. So the database,
// the Temporal history (which holds only the execution id and hosts), the activity stream and every
// answer hold the reference, never the value; a host's output is scrubbed of the value.
import { SecretValue, parseReference, pathProblem, underPrefix, type SecretRef } from '../common/secret';
import { mapStrings } from '../scenario/secrets/markers';

export const REFERENCE_PREFIX = 'secretstore:';

/** The first reference of `params` that is malformed or outside the prefix: its JSON pointer and why. */
export function paramSecretProblem(
  params: unknown,
  scenarioPrefix: string,
  pointer = '',
): { pointer: string; message: string } | null {
  if (typeof params === 'string') {
    if (!params.startsWith(REFERENCE_PREFIX)) return null;
    const ref = parseReference(params);
    if (!ref)
      return {
        pointer,
        message: 'a secret reference is secretstore:<path>#<field> with a canonical path (no value may follow it)',
      };
    if (!underPrefix(ref.path, scenarioPrefix))
      return {
        pointer,
        message: `secret ${ref.path} is outside secretstore.scenario_prefix (${scenarioPrefix}): the keeper reads only there`,
      };
    return null;
  }
  if (Array.isArray(params)) {
    for (let i = 0; i < params.length; i++) {
      const p = paramSecretProblem(params[i], scenarioPrefix, `${pointer}/${i}`);
      if (p) return p;
    }
    return null;
  }
  if (params !== null && typeof params === 'object') {
    for (const [k, v] of Object.entries(params)) {
      const p = paramSecretProblem(v, scenarioPrefix, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      if (p) return p;
    }
  }
  return null;
}

/**
 * The first reference of `params` (all well formed: paramSecretProblem first) outside every one of
 * `prefixes` (executions.secret_prefixes of the caller's role): its JSON pointer and store path. An
 * execution runs whatever its module does with the value, so the reference is bounded to the
 * secrets the role is meant to hand to hosts, not every secret under the scenario prefix.
 */
export function paramSecretOutside(
  params: unknown,
  prefixes: readonly string[],
  pointer = '',
): { pointer: string; path: string } | null {
  if (typeof params === 'string') {
    const ref = params.startsWith(REFERENCE_PREFIX) ? parseReference(params) : null;
    if (!ref || prefixes.some((p) => underPrefix(ref.path, p))) return null;
    return { pointer, path: `secretstore:${ref.path}` };
  }
  const entries: [string, unknown][] = Array.isArray(params)
    ? params.map((v, i) => [String(i), v])
    : params !== null && typeof params === 'object'
      ? Object.entries(params)
      : [];
  for (const [k, v] of entries) {
    const p = paramSecretOutside(v, prefixes, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    if (p) return p;
  }
  return null;
}

/** The references `params` holds (deduplicated). */
export function paramSecretRefs(params: unknown): SecretRef[] {
  const refs = new Map<string, SecretRef>();
  mapStrings(params, (s) => {
    const ref = s.startsWith(REFERENCE_PREFIX) ? parseReference(s) : null;
    if (ref) refs.set(`${ref.path}#${ref.field}`, ref);
    return s;
  });
  return [...refs.values()];
}

export interface ParamSecretReader {
  readFields(path: string): Promise<Record<string, unknown>>;
}

/**
 * The parameters with each reference replaced by its SecretValue, read now; or why they cannot be
 * (the store unreachable, the field missing): then nothing may be sent.
 */
export async function resolveParamSecrets(
  reader: ParamSecretReader | undefined,
  scenarioPrefix: string | undefined,
  params: Record<string, unknown>,
): Promise<{ params: Record<string, unknown>; values: SecretValue[] } | { error: string }> {
  const refs = paramSecretRefs(params);
  if (refs.length === 0) return { params, values: [] };
  const values = new Map<string, SecretValue>();
  for (const ref of refs) {
    const key = `${ref.path}#${ref.field}`;
    if (!reader || scenarioPrefix === undefined)
      return {
        error: `cannot read secretstore:${key}: this keeper reads no scenario secrets; nothing was sent to this host`,
      };
    // Checked again here, whatever was stored: the store is read only under the prefix.
    if (pathProblem(ref.path) !== null || !underPrefix(ref.path, scenarioPrefix))
      return { error: `secretstore:${key} is outside secretstore.scenario_prefix; nothing was sent to this host` };
    let fields: Record<string, unknown>;
    try {
      fields = await reader.readFields(ref.path);
    } catch (err) {
      return { error: `cannot read secretstore:${key}: ${(err as Error).message}; nothing was sent to this host` };
    }
    const v = fields[ref.field];
    if (typeof v !== 'string' || v === '')
      return { error: `the secret at ${ref.path} has no field "${ref.field}"; nothing was sent to this host` };
    values.set(key, new SecretValue(ref, v));
  }
  const out = mapStrings(params, (s) => {
    const ref = s.startsWith(REFERENCE_PREFIX) ? parseReference(s) : null;
    return ref ? values.get(`${ref.path}#${ref.field}`)! : s;
  }) as Record<string, unknown>;
  return { params: out, values: [...values.values()] };
}

// The soul's words when a file's validator refuses it (agent/state/file-state.ts runValidator): the
// validator's own output follows them.
const VALIDATE_REFUSED = /validate: .*? refused the new content \(exit [^)\s]*\)/s;

/**
 * A host's answer to an execution whose params hold a secret and a `validate`: when the validator
 * refused the content, only its exit status is kept. A validator is any program, and what it prints
 * about a candidate holding a secret can be the secret in any form (reversed, encoded) that no scrub
 * of the exact value catches (issue 45 H-2); the live file is unchanged, the exit status says enough.
 */
export function withholdValidatorOutput(output: string): string {
  const m = VALIDATE_REFUSED.exec(output);
  if (!m) return output;
  return `${output.slice(0, m.index)}${m[0]}; the live file is unchanged (the validator's output is withheld: the content holds a secret)`;
}
