// The network half of `keeper check-config` (issue 37 row 10): what a start would find wrong beyond
// the files, without changing anything. The secrets store answers and both AppRoles log in (the
// scenario role reading none of the keeper's own secrets), the DSN, cache password and signing key
// resolve, PostgreSQL, Redis and Temporal (its namespace) answer, and no live keeper holds this kid.
// No migration, no kid claim, no listener: a running keeper is not disturbed. Each problem names the
// key to look at and the fix; no secret value is ever part of one (pg and the store's errors are
// classified, never echoed with the DSN).
import { NativeConnection } from '@temporalio/worker';
import type { KeeperConfig } from '../platform/config/types';
import { connectDb, dbAnswers } from '../db/connect';
import { connectCache, cacheAnswers } from '../platform/cache';
import { decodeSigningKey } from '../platform/signing-key';
import { silentLogger } from '../common/logger';
import { connectSecretStore, type SecretStore } from '../secrets/client';
import { connectScenarioSecrets } from '../secrets/scenario';
import { temporalTlsOptions } from '../runs/tls';
import { kidClaimKey } from '../platform/keeper-claims';

const TIMEOUT_MS = 10_000;

function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s (${what})`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(t));
}

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Every problem a start would meet on the network; empty when all answer. */
export async function checkConfigOnline(config: KeeperConfig): Promise<string[]> {
  const problems: string[] = [];
  let secrets: SecretStore;
  try {
    secrets = await connectSecretStore({ ...config.secretstore, logger: silentLogger });
  } catch (err) {
    // Everything else is read from the store: nothing more to check without it.
    problems.push(
      `secretstore.auth: cannot log in to the secrets store: ${reason(err)}; fix: check secretstore.addr, secretstore.ca_file and the AppRole's role_id and secret_id (docs/install.md)`,
    );
    return problems;
  }
  try {
    const own: [string, string][] = [
      ['database.dsn_ref', config.database.dsn_ref],
      ['cache.password_ref', config.cache.password_ref],
      ['auth.jwt.signing_key_ref', config.auth.jwt.signing_key_ref],
    ];
    try {
      const scenario = await connectScenarioSecrets({ ...config.secretstore, logger: silentLogger }, secrets, own);
      scenario.close();
    } catch (err) {
      problems.push(
        `secretstore.scenario_auth: ${reason(err)}; fix: check the scenario AppRole's secret_id and its policy (docs/install.md)`,
      );
    }
    try {
      decodeSigningKey(await secrets.resolveRef(config.auth.jwt.signing_key_ref, 'signing_key'));
    } catch (err) {
      problems.push(
        `auth.jwt.signing_key_ref: cannot read the signing key from ${config.auth.jwt.signing_key_ref}: ${reason(err)}; fix: write the field signing_key there (docs/stack.md)`,
      );
    }
    await checkDatabase(config, secrets, problems);
    await checkCacheAndKid(config, secrets, problems);
  } finally {
    secrets.close();
  }
  await checkTemporal(config, problems);
  return problems;
}

async function checkDatabase(config: KeeperConfig, secrets: SecretStore, problems: string[]): Promise<void> {
  let dsn: string;
  try {
    dsn = await secrets.resolveRef(config.database.dsn_ref, 'dsn');
  } catch (err) {
    problems.push(
      `database.dsn_ref: cannot read the DSN from ${config.database.dsn_ref}: ${reason(err)}; fix: write the field dsn there`,
    );
    return;
  }
  const db = connectDb(dsn, { poolMax: 1, applicationName: `keeper-${config.kid}-check` });
  try {
    if (!(await within(TIMEOUT_MS, 'PostgreSQL', dbAnswers(db, 5000)))) {
      let host = '?';
      try {
        host = new URL(dsn).host;
      } catch {
        /* not a URL: the host stays unnamed rather than risk printing the DSN */
      }
      problems.push(
        `database.dsn_ref: PostgreSQL at ${host} does not answer with the DSN from ${config.database.dsn_ref}; fix: start it, or correct the DSN's host, user, password or database`,
      );
    }
  } catch (err) {
    problems.push(`database.dsn_ref: PostgreSQL: ${reason(err)}; fix: start it or correct the DSN`);
  } finally {
    await db.destroy().catch(() => undefined);
  }
}

async function checkCacheAndKid(config: KeeperConfig, secrets: SecretStore, problems: string[]): Promise<void> {
  let password: string | undefined;
  if (config.cache.password_ref !== '') {
    try {
      password = await secrets.resolveRef(config.cache.password_ref, 'password');
    } catch (err) {
      problems.push(
        `cache.password_ref: cannot read the password from ${config.cache.password_ref}: ${reason(err)}; fix: write the field password there`,
      );
      return;
    }
  }
  let cache: Awaited<ReturnType<typeof connectCache>>;
  try {
    cache = await within(TIMEOUT_MS, 'Redis', connectCache(config.cache.addr, password, silentLogger));
  } catch (err) {
    problems.push(
      `cache.addr: Redis at ${config.cache.addr} does not answer (${reason(err)}); fix: start it, or correct cache.addr and the password at cache.password_ref`,
    );
    return;
  }
  try {
    if (!(await cacheAnswers(cache))) {
      problems.push(
        `cache.addr: Redis at ${config.cache.addr} does not answer PING; fix: check that it is Redis and it is up`,
      );
      return;
    }
    // The claim a live keeper renews every second (keeper/kid-claim.ts): read, never taken.
    const raw = await cache.get(kidClaimKey(config.kid));
    if (raw !== null) {
      let holder: { host?: string; pid?: number; since?: string } = {};
      try {
        holder = JSON.parse(raw);
      } catch {
        /* a foreign value: still a claim */
      }
      problems.push(
        `kid: a live keeper already holds kid ${config.kid} (host ${holder.host ?? '?'}, pid ${holder.pid ?? '?'}, since ${holder.since ?? '?'}); fix: give this keeper a kid of its own (a second keeper changes kid, docs/install.md), or stop the other first`,
      );
    }
  } finally {
    await cache.quit().catch(() => cache.destroy());
  }
}

async function checkTemporal(config: KeeperConfig, problems: string[]): Promise<void> {
  const t = config.temporal;
  let connection: NativeConnection | undefined;
  try {
    const tls = temporalTlsOptions(t.tls);
    connection = await within(
      TIMEOUT_MS,
      'Temporal',
      NativeConnection.connect({ address: t.address, ...(tls ? { tls } : {}) }),
    );
  } catch (err) {
    problems.push(
      `temporal.address: Temporal at ${t.address} does not answer (${reason(err).split('\n')[0]}); fix: start its frontend, or correct temporal.address and temporal.tls`,
    );
    return;
  }
  try {
    await connection.withDeadline(Date.now() + TIMEOUT_MS, () =>
      connection!.workflowService.describeNamespace({ namespace: t.namespace }),
    );
  } catch (err) {
    problems.push(
      `temporal.namespace: Temporal at ${t.address} has no namespace ${t.namespace} or refuses it (${reason(err).split('\n')[0]}); fix: create it (temporal operator namespace create) or correct temporal.namespace`,
    );
  } finally {
    await connection.close().catch(() => undefined);
  }
}
