// The scenario side of the secrets store (issue 28): a second client, logged in with its own AppRole
// (secretstore.scenario_auth), whose store policy reads only below secretstore.scenario_prefix and
// writes only below its `incarnations/` part. Every read a scenario causes (secretstore(...), secret
// inputs), every service's git credential_ref and every SSH soul's credential_ref goes through it;
// the keeper's own client (DSN, cache password, signing key, PKI) is never handed to those paths.
// So a bug in the engine that lets a path through still meets the store's own refusal. The prefix
// is checked here as well, before the store is asked, so a refusal names the rule (not a bare 403).
import type { Logger } from '../common/logger';
import { parseReference, refProblem, underPrefix } from '../common/secret';
import { SecretStore, parseRef, type SecretStoreOptions } from './client';
import { SecretStoreError } from './errors';

/** Why `path` may not be read for a scenario (not canonical, or outside the prefix); null when it may. */
export function scenarioPathProblem(path: string, prefix: string): string | null {
  const bad = refProblem(path, 'field');
  if (bad) return bad;
  if (!underPrefix(path, prefix)) {
    return `${path} is outside secretstore.scenario_prefix (${prefix}): scenarios, services and SSH souls read secrets only below it, never the keeper's own`;
  }
  return null;
}

/**
 * Why a `credential_ref` (a service's git credential, an SSH soul's private key) is refused; null
 * when it is `secretstore:<path>#<field>` below the scenario prefix. Checked at registration (400
 * naming the field) and again at every use.
 */
export function credentialRefProblem(ref: string, prefix: string): string | null {
  const r = parseReference(ref);
  if (!r) return 'must be secretstore:<path>#<field>';
  const why = scenarioPathProblem(r.path, prefix);
  return why ? `must name a secret below secretstore.scenario_prefix (${prefix}): ${why}` : null;
}

/** Where secret inputs' values are written: `<prefix>incarnations/`. */
export function incarnationsFolder(prefix: string): string {
  return `${prefix.replace(/\/+$/, '')}/incarnations`;
}

export class ScenarioSecrets {
  constructor(
    private readonly store: SecretStore,
    readonly prefix: string,
  ) {}

  private check(path: string): void {
    const why = scenarioPathProblem(path, this.prefix);
    if (why) throw new SecretStoreError('outside_prefix', why);
  }

  private checkWrite(path: string): void {
    this.check(path);
    if (!underPrefix(path, incarnationsFolder(this.prefix))) {
      throw new SecretStoreError(
        'outside_prefix',
        `${path} is not below ${incarnationsFolder(this.prefix)}/: the keeper writes only the values of secret inputs, there`,
      );
    }
  }

  /** Reads a scenario secret (all fields), fresh from the store. */
  async readFields(path: string): Promise<Record<string, unknown>> {
    this.check(path);
    return this.store.readFields(path);
  }

  /** `secretstore:<path>` to the value of `field` (a credential_ref's secret). */
  async resolveRef(ref: string, field: string, opts: { useCache?: boolean } = {}): Promise<string> {
    this.check(parseRef(ref));
    return this.store.resolveRef(ref, field, opts);
  }

  /** Writes the values given to secret inputs: below `<prefix>incarnations/` only. */
  async writeFields(path: string, fields: Record<string, string>): Promise<void> {
    this.checkWrite(path);
    await this.store.writeFields(path, fields);
  }

  /** Deletes every secret below `folder` (an incarnation's secret inputs); below `<prefix>incarnations/` only. */
  async deleteBelow(folder: string): Promise<number> {
    const dir = folder.replace(/\/+$/, '');
    this.checkWrite(dir);
    let deleted = 0;
    for (const key of await this.store.listKeys(dir)) {
      const p = `${dir}/${key.replace(/\/+$/, '')}`;
      if (key.endsWith('/')) deleted += await this.deleteBelow(p);
      else {
        await this.store.deleteSecret(p);
        deleted++;
      }
    }
    return deleted;
  }

  close(): void {
    this.store.close();
  }
}

export interface ScenarioSecretsOptions extends Omit<SecretStoreOptions, 'auth' | 'token' | 'auth_key'> {
  scenario_auth: NonNullable<SecretStoreOptions['auth']>;
  scenario_prefix: string;
  logger?: Logger;
}

/**
 * Logs in as the scenario role, then asks the store whether that token can read any of the keeper's
 * own secrets (`own`: config key and `secretstore:<path>`, KV API paths found by the keeper's client).
 * If it can, the role's policy is wider than the scenario prefix and the keeper refuses to start.
 */
export async function connectScenarioSecrets(
  opts: ScenarioSecretsOptions,
  keeper: SecretStore,
  own: [string, string][],
): Promise<ScenarioSecrets> {
  const store = new SecretStore({
    addr: opts.addr,
    ...(opts.ca_file ? { ca_file: opts.ca_file } : {}),
    auth: opts.scenario_auth,
    auth_key: 'secretstore.scenario_auth',
    pki_mount: opts.pki_mount,
    pki_role: opts.pki_role,
    ...(opts.timeout_ms !== undefined ? { timeout_ms: opts.timeout_ms } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  try {
    await store.login();
    for (const [key, ref] of own) {
      if (ref === '') continue;
      const apiPath = await keeper.apiPathOf(parseRef(ref));
      if (await store.mayRead(apiPath)) {
        throw new SecretStoreError(
          'refused',
          `the scenario role (secretstore.scenario_auth.role_id "${opts.scenario_auth.role_id}") can read the keeper's own secret ${ref} (${key}); ` +
            `its store policy must grant read only below secretstore.scenario_prefix (${opts.scenario_prefix}) and write below its incarnations/ (scripts/provision-secretstore.js, docs/install.md)`,
        );
      }
    }
  } catch (err) {
    store.close();
    throw err;
  }
  return new ScenarioSecrets(store, opts.scenario_prefix);
}
