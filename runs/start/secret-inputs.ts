// Secret inputs at the run's start (issue 12). An input the scenario declares `secret: true` is accepted
// as a reference `secretstore:<path>#<field>`, or as a value that is written into the secrets store
// at once, under the incarnation's own prefix, and replaced by its reference before anything is
// stored: PostgreSQL, Temporal, answers and logs only ever see the reference.
import { incarnationSecretPrefix, parseReference } from '../../common/secret';
import type { SecretStore } from '../../secrets/client';
import { scenarioPathProblem } from '../../secrets/scenario';
import { refuse } from './outcome';

/** What sealing needs of the scenario engine: which inputs of an operation are secret (the runs' ScenarioPort fits). */
export interface SecretInputsSource {
  loadService(a: {
    git: string;
    ref: string;
    cacheDir: string;
    credentialRef?: string;
  }): Promise<{ secretInputs?: Record<string, string[]> }>;
}

export interface SealArgs {
  scenario: SecretInputsSource | undefined;
  secrets: Pick<SecretStore, 'writeFields'>;
  scenarioPrefix: string;
  cacheDir: string;
  service: { name: string; git: string; ref: string; credential_ref?: string | null };
  /** The incarnation (its name and secrets_key) the values belong to. */
  incarnation: { name: string; secrets_key: string | null };
  operation: string;
  applyId: string;
  input: Record<string, unknown>;
  /** The service as the pre-run check already loaded it; loaded here only when absent. */
  loaded?: { secretInputs?: Record<string, string[]> };
}

export async function sealSecretInputs(a: SealArgs): Promise<Record<string, unknown>> {
  if (!a.scenario || Object.keys(a.input).length === 0) return a.input;
  let secretNames: string[];
  try {
    const loaded =
      a.loaded ??
      (await a.scenario.loadService({
        git: a.service.git,
        ref: a.service.ref,
        cacheDir: a.cacheDir,
        credentialRef: a.service.credential_ref ?? undefined,
      }));
    secretNames = loaded.secretInputs?.[a.operation] ?? [];
  } catch {
    // Which inputs are secret is unknown: nothing may be stored, not even the input.
    throw refuse.unavailable(`the repository of service ${a.service.name} (needed to know which inputs are secret)`);
  }
  const out = { ...a.input };
  const values: Record<string, string> = {};
  for (const name of secretNames) {
    if (!Object.prototype.hasOwnProperty.call(out, name)) continue;
    const v = out[name];
    if (typeof v !== 'string' || v === '') {
      throw refuse.invalid(
        `input "${name}" is secret: give a non-empty string, or a reference secretstore:<path>#<field>`,
        [{ path: `/body/input/${name}`, message: 'a secret is a string' }],
      );
    }
    if (v.startsWith('secretstore:')) {
      const ref = parseReference(v);
      if (!ref) {
        throw refuse.invalid(`input "${name}" is not a valid reference; write secretstore:<path>#<field>`, [
          { path: `/body/input/${name}`, message: 'not a secretstore:<path>#<field> reference' },
        ]);
      }
      // Read with the scenario role's token, which reaches only the scenario prefix (issue 28).
      const why = scenarioPathProblem(ref.path, a.scenarioPrefix);
      if (why) throw refuse.invalid(`input "${name}": ${why}`, [{ path: `/body/input/${name}`, message: why }]);
      continue;
    }
    values[name] = v;
  }
  if (Object.keys(values).length === 0) return out;
  const path = `${incarnationSecretPrefix(a.scenarioPrefix, a.incarnation)}runs/${a.applyId}`;
  try {
    await a.secrets.writeFields(path, values);
  } catch {
    throw refuse.unavailable('the secrets store (secret inputs are stored there before a run starts)');
  }
  for (const name of Object.keys(values)) out[name] = `secretstore:${path}#${name}`;
  return out;
}
