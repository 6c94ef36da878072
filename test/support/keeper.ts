// A whole keeper for integration tests: its own database and secret (on the real stack), a config
// file with free ports, the first operator created by `keeper init`, and the server started
// in-process. `stop()` undoes all of it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import yaml from 'js-yaml';
import { silentLogger, type Logger } from '../../common/logger';
import { loadConfig } from '../../platform/config/load';
import type { KeeperConfig } from '../../platform/config/types';
import { keeperInit } from '../../keeper/init';
import { openCore } from '../../platform/runtime';
import { startKeeper, type KeeperOverrides, type RunningKeeper } from '../../keeper/server';
import { createTestDatabase, type TestDatabase } from './database';
import { freePort } from './ports';
import { SCENARIO_AUTH, deleteSecret, putSecret } from './secretstore';
import { stackEnv, stackFile, stackTemporalTlsConfig } from './stack-env';

export interface TestKeeperFiles {
  dir: string;
  configFile: string;
  secretName: string;
  db: TestDatabase;
  doc: Record<string, any>;
}

/** Writes a keeper.yml for a fresh database and secret; `mutate` may change the document first. */
export async function prepareKeeperConfig(
  opts: {
    mount?: 'secret' | 'kv1';
    kid?: string;
    mutate?: (doc: Record<string, any>) => void;
    db?: TestDatabase;
    secretName?: string;
  } = {},
): Promise<TestKeeperFiles> {
  const env = stackEnv();
  const db = opts.db ?? (await createTestDatabase());
  const mount = opts.mount ?? 'secret';
  const secretName = opts.secretName ?? `keeper/t-${randomBytes(5).toString('hex')}`;
  if (!opts.secretName) {
    await putSecret(mount, secretName, {
      dsn: db.dsn,
      password: env.REDIS_PASSWORD,
      signing_key: randomBytes(32).toString('base64'),
    });
  }
  const ref = `secretstore:${mount}/${secretName}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keeper-test-'));
  const tls = stackFile('tls');
  const doc: Record<string, any> = {
    kid: opts.kid ?? `k-${randomBytes(3).toString('hex')}`,
    listen: {
      openapi: { addr: `127.0.0.1:${await freePort()}` },
      metrics: { addr: `127.0.0.1:${await freePort()}` },
      grpc: {
        bootstrap: {
          addr: `127.0.0.1:${await freePort()}`,
          tls: { cert: path.join(tls, 'keeper.crt'), key: path.join(tls, 'keeper.key') },
        },
        event_stream: {
          addr: `127.0.0.1:${await freePort()}`,
          tls: { cert: path.join(tls, 'keeper.crt'), key: path.join(tls, 'keeper.key'), ca: path.join(tls, 'ca.pem') },
        },
      },
    },
    database: { dsn_ref: ref },
    cache: { addr: env.REDIS_ADDR, password_ref: ref },
    secretstore: {
      addr: env.SECRETSTORE_ADDR,
      auth: { method: 'approle', role_id: 'keeper', secret_id_file: stackFile('approle-secret-id') },
      // Scenario secrets and credential_refs: the stack's second role (scripts/provision-secretstore.js).
      scenario_auth: SCENARIO_AUTH(),
      pki_mount: 'pki',
      pki_role: 'soul',
    },
    auth: { jwt: { signing_key_ref: ref, issuer: 'keeper-test', ttl_default: '24h', ttl_bootstrap: '720h' } },
    temporal: {
      address: env.TEMPORAL_ADDRESS,
      namespace: 'default',
      task_queue: `keeper-test-${randomBytes(4).toString('hex')}`,
      ...(stackTemporalTlsConfig() ? { tls: stackTemporalTlsConfig() } : {}),
    },
    // Tests register local repositories (file://) and catalog entries on made-up hosts; the policy
    // itself is tested with keepers that narrow this (test/api/git-sources.test.ts). Every test keeper
    // runs on this machine, so a file:// path is on storage each of them sees (file_shared).
    services: {
      cache_dir: path.join(dir, 'services'),
      git: { schemes: ['https', 'http', 'ssh', 'git', 'file'], hosts: ['*'], file_shared: true },
    },
    reaper: { interval: '500ms', lease_ttl: '3s' },
    // Tests drive the API far faster than an operator would; the limiter has tests of its own.
    api: { rate_limit: { requests_per_second: 100000, burst: 100000 } },
    logging: { level: 'warn' },
  };
  opts.mutate?.(doc);
  const configFile = path.join(dir, 'keeper.yml');
  fs.writeFileSync(configFile, yaml.dump(doc));
  return { dir, configFile, secretName, db, doc };
}

export interface TestKeeper extends TestKeeperFiles {
  config: KeeperConfig;
  keeper: RunningKeeper;
  baseUrl: string;
  metricsUrl: string;
  adminToken: string;
  stop(): Promise<void>;
}

export type InitializedKeeper = Omit<TestKeeper, 'keeper' | 'stop'>;

/** A keeper's files, database and secret with its first operator (`admin`) created by keeper init; not started. */
export async function initTestKeeper(
  opts: Parameters<typeof prepareKeeperConfig>[0] & { log?: Logger } = {},
): Promise<InitializedKeeper> {
  const files = await prepareKeeperConfig(opts);
  const config = loadConfig(files.configFile);
  const core = await openCore(config, opts.log ?? silentLogger);
  const credential = path.join(files.dir, 'admin.jwt');
  try {
    await keeperInit({
      db: core.db,
      signingKey: core.signingKey,
      issuer: config.auth.jwt.issuer,
      ttlMs: config.auth.jwt.ttl_bootstrap_ms,
      aid: 'admin',
      credentialOut: credential,
    });
  } finally {
    await core.close();
  }
  return {
    ...files,
    config,
    baseUrl: `http://${config.listen.openapi.addr}`,
    metricsUrl: `http://${config.listen.metrics.addr}`,
    adminToken: fs.readFileSync(credential, 'utf8').trim(),
  };
}

/** Initializes the first operator (`admin`) through keeper init, then starts the keeper in-process. */
export async function startTestKeeper(
  opts: Parameters<typeof initTestKeeper>[0] & KeeperOverrides = {},
): Promise<TestKeeper> {
  const k = await initTestKeeper(opts);
  const keeper = await startKeeper(
    k.config,
    opts.log ?? silentLogger,
    opts.scenario ? { scenario: opts.scenario } : {},
  );
  return {
    ...k,
    keeper,
    async stop() {
      await keeper.stop();
      await cleanupKeeperFiles(k);
    },
  };
}

export async function cleanupKeeperFiles(files: TestKeeperFiles): Promise<void> {
  await files.db.drop().catch(() => undefined);
  await deleteSecret('secret', files.secretName).catch(() => undefined);
  await deleteSecret('kv1', files.secretName).catch(() => undefined);
  fs.rmSync(files.dir, { recursive: true, force: true });
}
