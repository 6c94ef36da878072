/**
 * Render with secrets (issues 12 and 28). Wraps render: secret inputs (given as
 * `secretstore:<path>#<field>`) and `secretstore(...)` calls are checked against the policy when
 * they are evaluated and recorded (scenario/secrets/record.ts); CEL and templates see markers
 * holding the record's random tokens. After render (scenario/secrets/finish.ts) every string of
 * the plan is checked to hold only whole markers of this record, markers become keeper-signed
 * handles per step, and committed state keeps references. The plan that leaves here holds no
 * value and no path in text: values are read by the dispatching keeper (runs/activities/secrets.ts).
 */
import { randomBytes } from 'node:crypto';
import { parseReference } from '../../common/secret';
import { makeError, sortErrors, type RenderError } from '../errors';
import { render, type RenderRequest, type RenderResult } from '../render/render';
import { RULE_SECRET_PATH, RULE_SECRET_USE, policyProblem, withSecretContext, type SecretPolicy } from './context';
import { finish } from './finish';
import { SecretRecord } from './record';

export interface RenderSecrets {
  /** The apply_id the plan is rendered under: dispatch verifies handles against it. */
  binding?: string;
  /** The key handles are signed with (deriveHandleKey of the keeper's key); without it (offline,
   *  tests) a random one, so such a plan's secrets can never be dispatched. */
  handleKey?: Uint8Array;
  /** The keeper's secretstore.scenario_prefix. */
  keeperPrefix?: string;
  /** Where the keeper stores plain values given for secret inputs of this incarnation. */
  inputPrefixes?: string[];
}

export function renderWithSecrets(req: RenderRequest & { secrets?: RenderSecrets }): RenderResult {
  const policy: SecretPolicy = { servicePrefixes: req.service.secretPrefixes ?? [] };
  if (req.secrets?.keeperPrefix !== undefined) policy.keeperPrefix = req.secrets.keeperPrefix;
  const scenario = req.service.errors.length === 0 ? req.service.scenarios.get(req.operation) : undefined;
  if (!scenario) return render(req);
  // Fresh per render: a marker of another render (or another run) names no secret here.
  const record = new SecretRecord();

  // Secret inputs: references only, within the service's prefixes or the incarnation's own.
  const errors: RenderError[] = [];
  const seal = (input: Record<string, unknown>, label: string, given: (name: string) => boolean) => {
    for (const d of scenario.inputs.values()) {
      if (!d.secret || !given(d.name)) continue;
      const has = Object.prototype.hasOwnProperty.call(input, d.name);
      const value = has ? input[d.name] : d.default;
      const ref = typeof value === 'string' ? parseReference(value) : null;
      if (!ref) {
        errors.push(
          makeError(
            d.pos,
            RULE_SECRET_USE,
            `${label}input "${d.name}" is secret: it takes a secretstore:<path>#<field> reference (canonical path), not a value`,
            'pass the value through the API (the keeper stores it and keeps the reference), or pass secretstore:<path>#<field>',
          ),
        );
        continue;
      }
      const problem = policyProblem(ref, policy, req.secrets?.inputPrefixes ?? []);
      if (problem) {
        errors.push(
          makeError(
            d.pos,
            RULE_SECRET_PATH,
            `${label}input "${d.name}": ${problem}`,
            "reference a path under the service's declared prefixes",
          ),
        );
        continue;
      }
      input[d.name] = record.issue(ref);
    }
  };
  const input: Record<string, unknown> = { ...(req.input ?? {}) };
  // render reports a missing input; a default is sealed like a given value.
  seal(input, '', (name) => {
    const d = scenario.inputs.get(name)!;
    return Object.prototype.hasOwnProperty.call(input, name) || d.hasDefault;
  });
  // A host's own layer (scenario/host-input.ts) may set a secret input too: a reference, sealed the same way.
  const hosts = req.hosts.map((h) => {
    if (!h.input) return h;
    const layer = { ...h.input };
    // `null` is "back to the default": a secret default is sealed here, as the run's own is above.
    for (const d of scenario.inputs.values())
      if (d.secret && layer[d.name] === null && d.hasDefault) layer[d.name] = d.default;
    seal(layer, `on host ${h.sid}: `, (name) => layer[name] !== undefined && layer[name] !== null);
    return { ...h, input: layer };
  });
  if (errors.length > 0) return { ok: false, errors: sortErrors(errors) };

  const r = withSecretContext({ record, policy }, () => render({ ...req, input, hosts }));
  if (!r.ok) return { ok: false, errors: r.errors.map(tagRule) };
  const handles = { key: req.secrets?.handleKey ?? randomBytes(32), binding: req.secrets?.binding ?? '' };
  return finish(r.plan, scenario, record, handles);
}

/** A `secretstore(...)` refusal reaches render as a CEL evaluation error; report it under its own rule. */
function tagRule(e: RenderError): RenderError {
  const m = /^(.*?)\s*\[(SL02[34])\]$/s.exec(e.message);
  return m ? { ...e, rule: m[2]!, message: m[1]! } : e;
}
