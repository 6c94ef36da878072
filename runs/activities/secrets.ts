// Secrets at dispatch (issues 12, 28): the last moment. A stored plan's step holds handles
// `«secret:<n>»` in its params and a list `secrets` whose entry n names a path and field with the
// keeper's MAC over (run binding, host, step index, n, path, field) (scenario/secrets/handles.ts).
// The dispatching keeper resolves only entries whose MAC verifies for the run, host and step it is
// sending, whose path is canonical and under secretstore.scenario_prefix; it reads the values from
// the secrets store (fresh, never cached) just before it sends a host its steps, and hands the hub
// steps whose params hold SecretText/SecretValue objects. Those print as `«secret:<path>#<field>»`
// everywhere; only the hub's encoding for that soul's own stream reveals them (common/secret.ts).
// A host whose steps hold a handle without a verified entry, or need a secret that cannot be read,
// is failed before anything is sent to it, with the reason; hosts that need none go on (interface
// spec 7, outage table).
import {
  SecretText,
  SecretValue,
  isSecret,
  pathProblem,
  refProblem,
  underPrefix,
  type SecretRef,
} from '../../common/secret';
import type { PlanStep } from '../../scenario/render/plan';
import { deriveHandleKey, verifyHandle } from '../../scenario/secrets/handles';
import { SECRET_MARK, mapStrings, splitHandles } from '../../scenario/secrets/markers';

export interface SecretReader {
  readFields(path: string): Promise<Record<string, unknown>>;
}

export interface DispatchSecrets {
  reader: SecretReader;
  /** The keeper's key (the JWT signing key, shared by the cluster); the handle key is derived from it. */
  nonceKey: Uint8Array;
  /** secretstore.scenario_prefix: checked again here, whatever the plan says. */
  scenarioPrefix: string;
}

export interface HostSecrets {
  /** Set when this host cannot be sent its steps; nothing may be sent then. */
  error?: string;
  steps: PlanStep[];
  values: SecretValue[];
}

const key = (r: SecretRef) => `${r.path}#${r.field}`;
const UNVERIFIED =
  'a step holds a secret placeholder that this keeper did not issue for this run, host and step; nothing was sent to this host (render the run again)';

/**
 * The verified secrets of each step of one host (by step index, then handle number), or why the
 * host cannot be sent anything. `binding` is the apply_id the plan was rendered under.
 */
function verifiedRefs(
  handleKey: Uint8Array,
  binding: string,
  sid: string,
  steps: PlanStep[],
): Map<number, SecretRef[]> | string {
  const out = new Map<number, SecretRef[]>();
  for (const step of steps) {
    const used = new Set<number>();
    let bad = false;
    mapStrings(step.params, (s) => {
      if (!s.includes(SECRET_MARK)) return s;
      const split = splitHandles(s);
      if (split.bad) bad = true;
      for (const p of split.parts) if (typeof p !== 'string') used.add(p.marker);
      return s;
    });
    if (bad) return UNVERIFIED;
    if (used.size === 0) continue;
    const refs: SecretRef[] = [];
    const entries = Array.isArray(step.secrets) ? step.secrets : [];
    for (const n of used) {
      const e = entries[n];
      if (!e || !verifyHandle(handleKey, { binding, sid, index: step.index, n }, e)) return UNVERIFIED;
      // The path is checked again as text the store will read unchanged, whatever signed it.
      const problem = refProblem(e.path, e.field);
      if (problem) return `secret ${n} of step ${step.index}: ${problem}; nothing was sent to this host`;
      refs[n] = { path: e.path, field: e.field };
    }
    out.set(step.index, refs);
  }
  return out;
}

/** Resolves the handles of every host's plan of this dispatch; a host without any is passed through. */
export async function resolvePlanSecrets(
  secrets: DispatchSecrets | undefined,
  binding: string,
  plans: Map<string, { steps: PlanStep[] }>,
): Promise<Map<string, HostSecrets>> {
  const out = new Map<string, HostSecrets>();
  const carrying = [...plans].filter(([, plan]) => plan.steps.some((st) => holdsSecret(st.params)));
  if (carrying.length === 0) return out;
  const handleKey = secrets ? deriveHandleKey(secrets.nonceKey) : undefined;

  // One read per path for the whole dispatch; a failure is kept per path and named in the reason.
  const byPath = new Map<string, Promise<Record<string, unknown> | Error>>();
  const read = (path: string) => {
    let p = byPath.get(path);
    if (!p) {
      p =
        secrets && pathProblem(path) === null && underPrefix(path, secrets.scenarioPrefix)
          ? secrets.reader
              .readFields(path)
              .catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))))
          : Promise.resolve(new Error(`${path} is outside secretstore.scenario_prefix`));
      byPath.set(path, p);
    }
    return p;
  };
  for (const [sid, plan] of carrying) {
    const refs = handleKey ? verifiedRefs(handleKey, binding, sid, plan.steps) : UNVERIFIED;
    if (typeof refs === 'string') {
      out.set(sid, { steps: plan.steps, values: [], error: refs });
      continue;
    }
    const values = new Map<string, SecretValue>();
    let error: string | undefined;
    for (const ref of [...refs.values()].flat()) {
      if (!ref || values.has(key(ref))) continue;
      const fields = await read(ref.path);
      if (fields instanceof Error) {
        error = `cannot read secretstore:${key(ref)}: ${fields.message}; nothing was sent to this host`;
        break;
      }
      const v = fields[ref.field];
      if (typeof v !== 'string' || v === '') {
        error = `the secret at ${ref.path} has no field "${ref.field}"; nothing was sent to this host`;
        break;
      }
      values.set(key(ref), new SecretValue(ref, v));
    }
    if (error) {
      out.set(sid, { steps: plan.steps, values: [], error });
      continue;
    }
    const steps = plan.steps.map((step) => {
      const mine = refs.get(step.index);
      if (!mine) return step;
      return {
        ...step,
        params: mapStrings(step.params, (s) => withValues(s, mine, values)) as Record<string, unknown>,
      };
    });
    out.set(sid, { steps, values: [...values.values()] });
  }
  return out;
}

function withValues(s: string, refs: SecretRef[], values: Map<string, SecretValue>): unknown {
  if (!s.includes(SECRET_MARK)) return s;
  const parts = splitHandles(s).parts.map((p) => (typeof p === 'string' ? p : values.get(key(refs[p.marker]!))!));
  return parts.length === 1 && parts[0] instanceof SecretValue ? parts[0] : new SecretText(parts);
}

/** Whether a step's params carry a secret (a resolved value or a handle): then a plan shows no content. */
export function holdsSecret(params: unknown): boolean {
  if (isSecret(params)) return true;
  if (typeof params === 'string') return params.includes(SECRET_MARK);
  if (Array.isArray(params)) return params.some(holdsSecret);
  if (params !== null && typeof params === 'object') return Object.values(params).some(holdsSecret);
  return false;
}
