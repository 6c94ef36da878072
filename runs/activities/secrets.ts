// Secrets at dispatch (issue 12): the last moment. The stored plan holds markers
// (scenario/secrets/markers.ts); the dispatching keeper reads the values from the secrets store
// (fresh, never cached) just before it sends a host its steps, and hands the hub steps whose
// params hold SecretText/SecretValue objects. Those print as `«secret:<path>#<field>»` everywhere;
// only the hub's encoding for that soul's own stream reveals them (common/secret.ts revealJson).
// A host whose steps need a secret that cannot be read is failed before anything is sent to it,
// with the reason; hosts that need none go on (interface spec 7, outage table).
import { createHmac } from 'node:crypto';
import { SecretText, SecretValue, isSecret, scrubValues, underPrefix, type SecretRef } from '../../common/secret';
import type { PlanStep } from '../../scenario/render/plan';
import { mapStrings, splitMarkers } from '../../scenario/secrets/markers';
import type { StepSender } from './deps';

export interface SecretReader { readFields(path: string): Promise<Record<string, unknown>> }

export interface DispatchSecrets {
  reader: SecretReader;
  /** Derives each run's marker nonce (the keeper's JWT signing key, shared by the cluster). */
  nonceKey: Uint8Array;
  /** secretstore.scenario_prefix: checked again here, whatever the plan says. */
  scenarioPrefix: string;
}

/** The run's marker nonce: render and dispatch derive the same one, nothing stores it. */
export function markerNonce(key: Uint8Array, applyId: string): string {
  return createHmac('sha256', key).update(`keeper secret markers\n${applyId}`).digest('hex').slice(0, 24);
}

export interface HostSecrets {
  /** Set when this host cannot be sent its steps; nothing may be sent then. */
  error?: string;
  steps: PlanStep[];
  values: SecretValue[];
}

const key = (r: SecretRef) => `${r.path}#${r.field}`;
const FOREIGN = '«secret:';

/** Resolves the markers of every host's plan of this dispatch; a host without any is passed through. */
export async function resolvePlanSecrets(secrets: DispatchSecrets | undefined, applyId: string,
  plans: Map<string, { steps: PlanStep[] }>): Promise<Map<string, HostSecrets>> {
  const nonce = secrets ? markerNonce(secrets.nonceKey, applyId) : '';
  const needs = new Map<string, { refs: SecretRef[]; foreign: boolean }>();
  for (const [sid, plan] of plans) {
    const refs: SecretRef[] = [];
    let foreign = false;
    for (const step of plan.steps) {
      mapStrings(step.params, (s) => {
        if (!s.includes(FOREIGN)) return s;
        for (const p of splitMarkers(s, nonce)) {
          if (typeof p !== 'string') refs.push(p.ref);
          else if (p.includes(FOREIGN)) foreign = true;
        }
        return s;
      });
    }
    if (refs.length > 0 || foreign) needs.set(sid, { refs, foreign });
  }
  const out = new Map<string, HostSecrets>();
  if (needs.size === 0) return out;

  // One read per path for the whole dispatch; a failure is kept per path and named in the reason.
  const byPath = new Map<string, Promise<Record<string, unknown> | Error>>();
  const read = (path: string) => {
    let p = byPath.get(path);
    if (!p) {
      p = secrets && underPrefix(path, secrets.scenarioPrefix)
        ? secrets.reader.readFields(path).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))))
        : Promise.resolve(new Error(`${path} is outside secretstore.scenario_prefix`));
      byPath.set(path, p);
    }
    return p;
  };
  for (const [sid, need] of needs) {
    const plan = plans.get(sid)!;
    if (!secrets || need.foreign) {
      out.set(sid, { steps: plan.steps, values: [], error: 'a step holds a secret placeholder that is not this run\'s; nothing was sent to this host (render the run again)' });
      continue;
    }
    const values = new Map<string, SecretValue>();
    let error: string | undefined;
    for (const ref of need.refs) {
      if (values.has(key(ref))) continue;
      const fields = await read(ref.path);
      if (fields instanceof Error) { error = `cannot read secretstore:${key(ref)}: ${fields.message}; nothing was sent to this host`; break; }
      const v = fields[ref.field];
      if (typeof v !== 'string' || v === '') { error = `the secret at ${ref.path} has no field "${ref.field}"; nothing was sent to this host`; break; }
      values.set(key(ref), new SecretValue(ref, v));
    }
    if (error) { out.set(sid, { steps: plan.steps, values: [], error }); continue; }
    const steps = plan.steps.map((step) => ({ ...step, params: mapStrings(step.params, (s) => withValues(s, nonce, values)) as Record<string, unknown> }));
    out.set(sid, { steps, values: [...values.values()] });
  }
  return out;
}

function withValues(s: string, nonce: string, values: Map<string, SecretValue>): unknown {
  if (!s.includes(FOREIGN)) return s;
  const parts = splitMarkers(s, nonce).map((p) => (typeof p === 'string' ? p : values.get(key(p.ref))!));
  return parts.length === 1 && parts[0] instanceof SecretValue ? parts[0] : new SecretText(parts);
}

/** The hub's sender, with each answer's output scrubbed of the host's values (a module echoing one). */
export function secretSender(inner: StepSender, values: SecretValue[]): StepSender {
  if (values.length === 0) return inner;
  return {
    isConnected: (sid) => inner.isConnected(sid),
    async sendStep(sid, step, opts) {
      const answer = await inner.sendStep(sid, step, opts);
      const diff = answer.diff === undefined ? {} : { diff: JSON.parse(scrubValues(JSON.stringify(answer.diff), values)) as Record<string, unknown> };
      return { ...answer, output: scrubValues(answer.output, values), ...diff };
    },
  };
}

/** Whether a step's params carry a secret (a resolved value or a marker): then a plan shows no content. */
export function holdsSecret(params: unknown): boolean {
  if (isSecret(params)) return true;
  if (typeof params === 'string') return params.includes(FOREIGN);
  if (Array.isArray(params)) return params.some(holdsSecret);
  if (params !== null && typeof params === 'object') return Object.values(params).some(holdsSecret);
  return false;
}
