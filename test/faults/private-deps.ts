// Private instances of the dependencies a fault test breaks, on free loopback ports under the test's
// own temp dir: the shared stack (/work/main/.stack) is never stopped, other suites run on it. Each
// instance can be stopped and started again on the same port with the same data, as an operator's
// restart would.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import type { TestDatabase } from '../support/database';
import { freePort } from '../support/ports';
import { repoRoot } from '../support/repo';

export interface Restartable {
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

// The cached tool as the stack runs it: build-tools.sh names the directory of this recipe (a glob
// over the cache also matched other builds there, e.g. temporal-server-*, which has no `temporal`).
function toolPath(tool: 'temporal' | 'bao'): string {
  return execFileSync(path.join(repoRoot(), 'scripts', 'build-tools.sh'), [`path-${tool}`], {
    encoding: 'utf8',
  }).trim();
}

export async function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function until(what: string, fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function killAndWait(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

// --- PostgreSQL: a cluster of its own, owned by the postgres user (the server refuses to run as root).

const PG_BIN = '/usr/lib/postgresql/15/bin';

export interface PrivatePostgres extends Restartable {
  port: number;
  database(): Promise<TestDatabase>;
}

export async function startPrivatePostgres(parent: string): Promise<PrivatePostgres> {
  const dir = fs.mkdtempSync(path.join(parent, 'pg-'));
  // The postgres user must reach its data dir: the runner's temp dirs are 0700 root.
  for (let d = dir; d !== path.dirname(d) && d.startsWith(os.tmpdir()); d = path.dirname(d))
    fs.chmodSync(d, fs.statSync(d).mode | 0o011);
  fs.chmodSync(os.tmpdir(), fs.statSync(os.tmpdir()).mode | 0o011);
  const data = path.join(dir, 'data');
  fs.mkdirSync(data, { mode: 0o700 });
  execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  const password = randomBytes(12).toString('hex');
  const pwfile = path.join(dir, 'pw');
  fs.writeFileSync(pwfile, password);
  execFileSync('chown', ['postgres:postgres', pwfile]);
  const asPg = (bin: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', path.join(PG_BIN, bin), ...args], { stdio: 'pipe' });
  asPg('initdb', ['-D', data, '-U', 'keeper', `--pwfile=${pwfile}`, '-A', 'scram-sha-256', '--no-sync', '-E', 'UTF8']);
  fs.rmSync(pwfile);
  const port = await freePort();
  const log = path.join(dir, 'log');
  const start = async () => {
    // fsync off: the faults here are process restarts, not power loss, and the machine is shared.
    asPg('pg_ctl', [
      '-D',
      data,
      '-l',
      log,
      '-w',
      '-t',
      '60',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
      'start',
    ]);
  };
  // `fast`: clients are disconnected, as in a real restart; open transactions abort.
  const stop = async () => {
    asPg('pg_ctl', ['-D', data, '-w', '-t', '60', '-m', 'fast', 'stop']);
  };
  await start();
  const dsnFor = (db: string) => `postgres://keeper:${password}@127.0.0.1:${port}/${db}`;
  return {
    port,
    start,
    stop,
    async destroy() {
      try {
        await stop();
      } catch {
        /* already stopped */
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
    async database() {
      const name = `keeper_f_${randomBytes(4).toString('hex')}`;
      const admin = knexFactory({ client: 'pg', connection: dsnFor('postgres'), pool: { min: 0, max: 1 } });
      try {
        await admin.raw(`create database ${name}`);
      } finally {
        await admin.destroy();
      }
      return { name, dsn: dsnFor(name), drop: async () => undefined };
    },
  };
}

// --- Temporal: a dev server with its own SQLite file, so a stop and start keeps every workflow.

const SEARCH_ATTRIBUTES = [
  'KeeperIncarnation=Keyword',
  'KeeperOperation=Keyword',
  'KeeperServiceRef=Keyword',
  'KeeperService=Keyword',
];

export interface PrivateTemporal extends Restartable {
  address: string;
}

export async function startPrivateTemporal(parent: string): Promise<PrivateTemporal> {
  const dir = fs.mkdtempSync(path.join(parent, 'temporal-'));
  const [port, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const bin = toolPath('temporal');
  let child: ChildProcess | undefined;
  const start = async () => {
    const args = [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--http-port',
      String(httpPort),
      '--metrics-port',
      String(metricsPort),
      '--headless',
      '--db-filename',
      path.join(dir, 'temporal.db'),
      '--log-level',
      'error',
      ...SEARCH_ATTRIBUTES.flatMap((a) => ['--search-attribute', a]),
    ];
    const logFd = fs.openSync(path.join(dir, 'log'), 'a');
    child = spawn(bin, args, { stdio: ['ignore', logFd, logFd] });
    fs.closeSync(logFd);
    await until(
      `the private Temporal dev server on ${port}`,
      async () => {
        try {
          execFileSync(bin, ['operator', 'cluster', 'health', '--address', `127.0.0.1:${port}`], { stdio: 'ignore' });
          return true;
        } catch {
          return false;
        }
      },
      90_000,
    );
  };
  const stop = () => killAndWait(child, 'SIGTERM');
  await start();
  return {
    address: `127.0.0.1:${port}`,
    start,
    stop,
    async destroy() {
      await killAndWait(child);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// --- Secrets store: a Vault dev server (in memory), provisioned as scripts/provision-secretstore.js
// provisions the stack's: KV v2 `secret/`, the PKI root of the stack imported (souls' and the keeper
// leaf's chain), the `soul` role, an AppRole `keeper` with the same narrow policy, and the scenario
// AppRole `keeper-scenario` with the script's own scenario policy.

export interface PrivateSecretStore extends Restartable {
  addr: string;
  secretIdFile: string;
  scenarioSecretIdFile: string;
  putSecret(name: string, fields: Record<string, string>): Promise<void>;
}

export async function startPrivateSecretStore(parent: string, stackDir: string): Promise<PrivateSecretStore> {
  const dir = fs.mkdtempSync(path.join(parent, 'vault-'));
  const port = await freePort();
  const addr = `http://127.0.0.1:${port}`;
  const token = `root-${randomBytes(8).toString('hex')}`;
  const bin = toolPath('bao');
  const secretIdFile = path.join(dir, 'approle-secret-id');
  const scenarioSecretIdFile = path.join(dir, 'approle-scenario-secret-id');
  const secrets = new Map<string, Record<string, string>>();
  let child: ChildProcess | undefined;
  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${addr}/v1/${p}`, {
      method,
      headers: { 'X-Vault-Token': token, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status}: ${text.slice(0, 200)}`);
    return text ? JSON.parse(text) : {};
  };
  const provision = async () => {
    await api('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }).catch(() => undefined);
    for (const [name, fields] of secrets) await api('POST', `secret/data/${name}`, { data: fields });
    await api('POST', 'sys/mounts/pki', { type: 'pki' });
    await api('POST', 'sys/mounts/pki/tune', { max_lease_ttl: '87600h' });
    await api('POST', 'pki/config/ca', {
      pem_bundle: fs.readFileSync(path.join(stackDir, 'pki-root-bundle.pem'), 'utf8'),
    });
    await api('POST', 'pki/roles/soul', {
      allowed_domains: ['keeper.test', 'localhost'],
      allow_subdomains: true,
      allow_bare_domains: true,
      max_ttl: '720h',
      ttl: '720h',
      key_type: 'any',
      use_csr_common_name: false,
      use_csr_sans: false,
      allow_ip_sans: false,
      enforce_hostnames: true,
      require_cn: true,
      server_flag: false,
      client_flag: true,
    });
    await api('POST', 'sys/auth/approle', { type: 'approle' });
    await api('PUT', 'sys/policies/acl/keeper', {
      policy: ['secret/data/keeper/*', 'sys/internal/ui/mounts/*']
        .map((p) => `path "${p}" { capabilities = ["read"] }`)
        .concat([
          'path "pki/sign/soul" { capabilities = ["create", "update"] }',
          'path "auth/token/renew-self" { capabilities = ["update"] }',
          'path "auth/token/lookup-self" { capabilities = ["read"] }',
        ])
        .join('\n'),
    });
    // A short token TTL so the keeper's renewal and re-login are exercised within the test.
    await api('POST', 'auth/approle/role/keeper', {
      token_policies: ['keeper'],
      token_ttl: '1h',
      token_max_ttl: '24h',
      secret_id_ttl: '0',
      token_type: 'service',
    });
    await api('POST', 'auth/approle/role/keeper/role-id', { role_id: 'keeper' });
    // The dev store is in memory: the same secret_id is re-imported after a restart (custom-secret-id),
    // as the keeper's secret_id file outlives a production store's restart.
    const sid = fs.existsSync(secretIdFile)
      ? fs.readFileSync(secretIdFile, 'utf8').trim()
      : randomBytes(16).toString('hex');
    await api('POST', 'auth/approle/role/keeper/custom-secret-id', { secret_id: sid });
    if (!fs.existsSync(secretIdFile)) fs.writeFileSync(secretIdFile, sid + '\n', { mode: 0o400 });
    // The scenario role (issue 28), re-imported the same way.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { scenarioPolicy } = require(path.join(repoRoot(), 'scripts', 'provision-secretstore.js')) as {
      scenarioPolicy(prefixes?: string[]): string;
    };
    await api('PUT', 'sys/policies/acl/keeper-scenario', { policy: scenarioPolicy(['secret/keeper/services/']) });
    await api('POST', 'auth/approle/role/keeper-scenario', {
      token_policies: ['keeper-scenario'],
      token_ttl: '1h',
      token_max_ttl: '24h',
      secret_id_ttl: '0',
      token_type: 'service',
    });
    await api('POST', 'auth/approle/role/keeper-scenario/role-id', { role_id: 'keeper-scenario' });
    const ssid = fs.existsSync(scenarioSecretIdFile)
      ? fs.readFileSync(scenarioSecretIdFile, 'utf8').trim()
      : randomBytes(16).toString('hex');
    await api('POST', 'auth/approle/role/keeper-scenario/custom-secret-id', { secret_id: ssid });
    if (!fs.existsSync(scenarioSecretIdFile)) fs.writeFileSync(scenarioSecretIdFile, ssid + '\n', { mode: 0o400 });
  };
  const start = async () => {
    const logFd = fs.openSync(path.join(dir, 'log'), 'a');
    child = spawn(
      bin,
      ['server', '-dev', `-dev-root-token-id=${token}`, `-dev-listen-address=127.0.0.1:${port}`, '-dev-no-store-token'],
      { stdio: ['ignore', logFd, logFd], env: { ...process.env, HOME: dir } },
    );
    fs.closeSync(logFd);
    await until(
      `the private secrets store on ${port}`,
      async () => (await fetch(`${addr}/v1/sys/health`).catch(() => undefined))?.ok === true,
      30_000,
    );
    await provision();
  };
  const stop = () => killAndWait(child, 'SIGTERM');
  await start();
  return {
    addr,
    secretIdFile,
    scenarioSecretIdFile,
    start,
    stop,
    async putSecret(name, fields) {
      secrets.set(name, fields);
      await api('POST', `secret/data/${name}`, { data: fields });
    },
    async destroy() {
      await killAndWait(child);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
