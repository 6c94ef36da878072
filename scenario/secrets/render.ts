/**
 * Render with secrets (issue 12). Wraps render: secret inputs (given as
 * `secretstore:<path>#<field>`) and `secretstore(...)` calls become the
 * run's markers, checked against the policy; after render, every string of
 * the plan is checked to hold only whole markers (a secret cannot be
 * transformed, only placed), and committed state keeps references, never
 * markers or text built from a secret. The plan that leaves here holds no
 * value: values are read by the dispatching keeper (activities/secrets.ts).
 */
import { randomBytes } from 'node:crypto';
import { parseReference, referenceText } from '../../common/secret';
import { makeError, sortErrors, type RenderError } from '../errors';
import { render, type RenderRequest, type RenderResult } from '../render/render';
import type { RenderPlan } from '../render/plan';
import { RULE_SECRET_PATH, RULE_SECRET_USE, policyProblem, withSecretContext, type SecretPolicy } from './context';
import { makeMarker, mangled, mapStrings, splitMarkers, wholeMarker } from './markers';

export interface RenderSecrets {
  /** 24 lowercase hex digits, the run's own (activities derive it from the apply_id). */
  nonce?: string;
  /** The keeper's secretstore.scenario_prefix. */
  keeperPrefix?: string;
  /** Where the keeper stores plain values given for secret inputs of this incarnation. */
  inputPrefixes?: string[];
}

export function newNonce(): string {
  return randomBytes(12).toString('hex');
}

export function renderWithSecrets(req: RenderRequest & { secrets?: RenderSecrets }): RenderResult {
  const nonce = req.secrets?.nonce ?? newNonce();
  if (!/^[0-9a-f]{24}$/.test(nonce)) throw new Error('secret nonce must be 24 lowercase hex digits');
  const policy: SecretPolicy = { servicePrefixes: req.service.secretPrefixes ?? [] };
  if (req.secrets?.keeperPrefix !== undefined) policy.keeperPrefix = req.secrets.keeperPrefix;
  const scenario = req.service.errors.length === 0 ? req.service.scenarios.get(req.operation) : undefined;
  if (!scenario) return render(req);

  // Secret inputs: references only, within the service's prefixes or the incarnation's own.
  const errors: RenderError[] = [];
  const input: Record<string, unknown> = { ...(req.input ?? {}) };
  for (const d of scenario.inputs.values()) {
    if (!d.secret) continue;
    const has = Object.prototype.hasOwnProperty.call(input, d.name);
    const given = has ? input[d.name] : d.default;
    if (!has && !d.hasDefault) continue; // render reports the missing input
    const ref = typeof given === 'string' ? parseReference(given) : null;
    if (!ref) {
      errors.push(makeError(d.pos, RULE_SECRET_USE, `input "${d.name}" is secret: it takes a secretstore:<path>#<field> reference, not a value`,
        'pass the value through the API (the keeper stores it and keeps the reference), or pass secretstore:<path>#<field>'));
      continue;
    }
    const problem = policyProblem(ref, policy, req.secrets?.inputPrefixes ?? []);
    if (problem) { errors.push(makeError(d.pos, RULE_SECRET_PATH, `input "${d.name}": ${problem}`, 'reference a path under the service\'s declared prefixes')); continue; }
    input[d.name] = makeMarker(ref, nonce);
  }
  if (errors.length > 0) return { ok: false, errors: sortErrors(errors) };

  const r = withSecretContext({ nonce, policy }, () => render({ ...req, input }));
  if (!r.ok) return { ok: false, errors: r.errors.map(tagRule) };
  return finish(r.plan, nonce);
}

/** A `secretstore(...)` refusal reaches render as a CEL evaluation error; report it under its own rule. */
function tagRule(e: RenderError): RenderError {
  const m = /^(.*?)\s*\[(SL02[34])\]$/s.exec(e.message);
  return m ? { ...e, rule: m[2]!, message: m[1]! } : e;
}

// Params whose values never come back in a result: the soul reports a file's hash and size, never its content.
const SECRET_PARAMS: Record<string, string[]> = { 'core.file.present': ['content'], 'core.file.rendered': ['content', 'vars'] };

function finish(plan: RenderPlan, nonce: string): RenderResult {
  const errors: RenderError[] = [];
  const where = { file: `scenario/${plan.operation}/main.yml`, line: 1, col: 1 };
  for (const h of plan.hosts) {
    for (const step of h.steps) {
      // A secret may go only where no module output, diff or ledger entry ever repeats it: a file's content.
      for (const [name, v] of Object.entries(step.params)) {
        if (SECRET_PARAMS[step.module]?.includes(name)) continue;
        mapStrings(v, (s) => {
          if (splitMarkers(s, nonce).some((p) => typeof p !== 'string')) {
            errors.push(makeError(where, RULE_SECRET_USE, `task "${step.name}": ${step.module} param "${name}" holds a secret; a secret can go only into a file's content`,
              'pass the secret in `content` (core.file.present) or in `vars` (core.file.rendered)'));
          }
          return s;
        });
      }
      mapStrings(step.params, (s) => {
        if (mangled(s, nonce)) {
          errors.push(makeError(where, RULE_SECRET_USE, `task "${step.name}": a secret was transformed (only placing a secret in text works; functions such as upper or b64enc would see a placeholder)`,
            'insert the secret as it is; store a transformed value in the secrets store instead'));
        }
        return s;
      });
    }
  }
  // State keeps the reference of a secret; text built around one cannot be committed.
  const toState = (s: string): unknown => {
    const whole = wholeMarker(s, nonce);
    if (whole) return referenceText(whole);
    if (splitMarkers(s, nonce).some((p) => typeof p !== 'string') || mangled(s, nonce)) {
      errors.push(makeError(where, RULE_SECRET_USE, 'state_changes: a value mixes a secret into text; committed state may hold a reference, never a value',
        'set the state key to the secret alone (it is stored as its secretstore: reference)'));
      return '';
    }
    return s;
  };
  const sets = plan.stateChanges.sets.map((x) => ({ key: x.key, value: mapStrings(x.value, toState) }));
  const nextState = mapStrings(plan.nextState, toState) as Record<string, unknown>;
  const input = mapStrings(plan.input, (s) => { const w = wholeMarker(s, nonce); return w ? referenceText(w) : s; }) as Record<string, unknown>;
  if (errors.length > 0) return { ok: false, errors: dedupe(errors) };
  return { ok: true, plan: { ...plan, input, stateChanges: { sets }, nextState } };
}

function dedupe(errors: RenderError[]): RenderError[] {
  const seen = new Set<string>();
  return errors.filter((e) => !seen.has(e.message) && !!seen.add(e.message));
}
