// What a keeper process holds once started: config, secrets client, database, cache, signing key,
// metrics. Built in dependency order with the spec's fail-fast rules (interface spec 4.5, 7): the
// secrets store must answer and the DSN must resolve, or the process stops with the reason.
import type { Knex } from 'knex';
import type { Logger } from '../common/logger';
import { connectDb } from '../db/connect';
import { migrateLatest } from '../db/migrate';
import { connectSecretStore, type SecretStore } from '../secrets/client';
import { SecretStoreError } from '../secrets/errors';
import { connectScenarioSecrets, type ScenarioSecrets } from '../secrets/scenario';
import { decodeSigningKey } from './signing-key';
import { connectCache, type Cache } from './cache';
import type { KeeperConfig } from './config/types';

export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

export interface Runtime {
  config: KeeperConfig;
  log: Logger;
  secrets: SecretStore;
  db: Knex;
  signingKey: Uint8Array;
  close(): Promise<void>;
}

/**
 * `keeper run` adds the cache and the scenario side of the secrets store: scenario secrets, secret
 * inputs and credential_refs are read with `scenarioSecrets` (its own AppRole), never with `secrets`.
 */
export interface RuntimeWithCache extends Runtime {
  cache: Cache;
  scenarioSecrets: ScenarioSecrets;
}

async function must<T>(what: string, fix: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const reason = err instanceof SecretStoreError || err instanceof Error ? err.message : String(err);
    throw new StartupError(`${what}: ${reason}${fix ? `\n  fix: ${fix}` : ''}`);
  }
}

/** Secrets, database (migrated) and signing key: what `keeper init` and `keeper run` both need. */
export async function openCore(config: KeeperConfig, log: Logger): Promise<Runtime> {
  const secrets = await must('cannot log in to the secrets store', 'check secretstore.addr and secretstore.auth', () =>
    connectSecretStore({ ...config.secretstore, logger: log }),
  );
  const dsn = await must(
    `cannot read the database DSN from ${config.database.dsn_ref} (field dsn)`,
    'check that the secrets store is reachable and the path and field exist',
    () => secrets.resolveRef(config.database.dsn_ref, 'dsn'),
  );
  const signingKey = await must(
    `cannot read the JWT signing key from ${config.auth.jwt.signing_key_ref} (field signing_key)`,
    '',
    async () => decodeSigningKey(await secrets.resolveRef(config.auth.jwt.signing_key_ref, 'signing_key')),
  );
  const db = connectDb(dsn, { poolMax: config.database.pool_max, applicationName: `keeper-${config.kid}` });
  try {
    const applied = await must(
      'cannot migrate the database schema',
      'check that PostgreSQL answers at the DSN and the role may create tables',
      () => migrateLatest(db),
    );
    if (applied.length > 0) log.info('database migrations applied', { migrations: applied });
  } catch (err) {
    await db.destroy();
    secrets.close();
    throw err;
  }
  return {
    config,
    log,
    secrets,
    db,
    signingKey,
    async close() {
      await db.destroy();
      secrets.close();
    },
  };
}

/** The core plus the scenario secrets client and the cache, for `keeper run`. */
export async function openRuntime(config: KeeperConfig, log: Logger): Promise<RuntimeWithCache> {
  const core = await openCore(config, log);
  let scenarioSecrets: ScenarioSecrets | undefined;
  try {
    const own: [string, string][] = [
      ['database.dsn_ref', config.database.dsn_ref],
      ['cache.password_ref', config.cache.password_ref],
      ['auth.jwt.signing_key_ref', config.auth.jwt.signing_key_ref],
    ];
    scenarioSecrets = await must(
      'cannot use the scenario role of the secrets store (secretstore.scenario_auth)',
      "check secretstore.scenario_auth and the role's policy (docs/secrets.md)",
      () => connectScenarioSecrets({ ...config.secretstore, logger: log }, core.secrets, own),
    );
    const scenario = scenarioSecrets;
    const password =
      config.cache.password_ref === ''
        ? undefined
        : await must(`cannot read the cache password from ${config.cache.password_ref} (field password)`, '', () =>
            core.secrets.resolveRef(config.cache.password_ref, 'password'),
          );
    const cache = await must(
      `cannot connect to the cache at ${config.cache.addr}`,
      'start Redis or fix cache.addr',
      () => connectCache(config.cache.addr, password, log),
    );
    return {
      ...core,
      cache,
      scenarioSecrets: scenario,
      async close() {
        await cache.quit().catch(() => cache.destroy());
        scenario.close();
        await core.close();
      },
    };
  } catch (err) {
    scenarioSecrets?.close();
    await core.close();
    throw err;
  }
}
