// A keeper as its own process (`bin/keeper run`: its own database, queue and ports) with a swarm of
// souls in this process (bench/fanout/swarm-threads.ts: each soul its own TLS stream and
// certificate), for the benchmarks that need hundreds of hosts on two cores (bench/converge,
// bench/exec's swarm). The souls are registered straight in the registry as onboarded and their
// certificates signed here: onboarding is not what these benchmarks measure. With `real`, each soul
// applies its steps with the soul's own step handler (real modules, a ledger of its own);
// without, it answers every step as already satisfied.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '../common/logger';
import { keeperInit } from '../keeper/init';
import { loadConfig } from '../platform/config/load';
import { openCore } from '../platform/runtime';
import { cleanupKeeperFiles, prepareKeeperConfig } from '../test/support/keeper';
import { repoRoot } from '../test/support/repo';
import { SwarmThreads } from './fanout/swarm-threads';
import { signSwarmCerts } from './streams/swarm';

export interface SwarmSoulSpec {
  sid: string;
  covens: string[];
  /** Already converged: the converger leaves it alone until its covens change. */
  converged?: boolean;
}

export type Api = (method: string, p: string, body?: unknown) => Promise<{ status: number; body: any }>;

export interface SwarmKeeper {
  api: Api;
  /** The keeper's API address and the operator token (what keeperctl and bench/exec need). */
  baseUrl: string;
  adminToken: string;
  core: Awaited<ReturnType<typeof openCore>>;
  keeper: ChildProcess;
  swarm: SwarmThreads;
  /** Scratch directory of this rig (service repositories, the souls' ledgers). */
  root: string;
  close(): Promise<void>;
}

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export async function startSwarmKeeper(o: {
  souls: SwarmSoulSpec[];
  real: boolean;
  threads?: number;
  /** Extra keeper config (the rig sets logging, reaper and accept rate for a swarm). */
  mutate?: (doc: Record<string, any>) => void;
}): Promise<SwarmKeeper> {
  const files = await prepareKeeperConfig({
    mutate: (doc) => {
      doc.logging = { level: 'error' };
      // The swarm's souls heartbeat as bench/fanout's do: a lease they keep.
      doc.reaper = { interval: '1s', lease_ttl: '15s' };
      doc.hub = { accept_rate: { per_second: 1000000, burst: 1000000 } };
      o.mutate?.(doc);
    },
  });
  const config = loadConfig(files.configFile);
  const core = await openCore(config, silentLogger);
  const credential = path.join(files.dir, 'admin.jwt');
  await keeperInit({
    db: core.db,
    signingKey: core.signingKey,
    issuer: config.auth.jwt.issuer,
    ttlMs: 3_600_000,
    aid: 'bench',
    credentialOut: credential,
  });
  const now = new Date();
  await core.db('souls').insert(
    o.souls.map((s) => ({
      sid: s.sid,
      transport: 'agent',
      covens: s.covens,
      status: 'pending',
      onboarded_at: now,
      ...(s.converged ? { converged_at: now } : {}),
    })),
  );
  const token = fs.readFileSync(credential, 'utf8').trim();
  const url = `http://${config.listen.openapi.addr}`;
  const api: Api = async (method, p, body) => {
    const res = await fetch(url + p, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const keeper = spawn(
    process.execPath,
    [path.join(repoRoot(), 'bin', 'keeper'), 'run', `--config=${files.configFile}`],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-keeper-'));
  let swarm: SwarmThreads | undefined;
  const close = async () => {
    await swarm?.close();
    await core.close();
    keeper.kill('SIGTERM');
    if (keeper.exitCode === null && keeper.signalCode === null) await new Promise((r) => keeper.once('exit', r));
    await cleanupKeeperFiles(files);
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    await waitFor(`${url}/readyz ok`, async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined), 60_000, 200);
    const { keyPem, certs } = await signSwarmCerts(o.souls.map((s) => s.sid));
    const ca = fs.readFileSync(config.listen.grpc.event_stream.tls.ca);
    const target = `localhost:${config.listen.grpc.event_stream.addr.split(':')[1]}`;
    swarm = SwarmThreads.start(
      { target, ca, keyPem, real: o.real, soulsRoot: path.join(root, 'souls') },
      certs,
      o.threads ?? os.cpus().length,
    );
    await swarm.connect();
    await waitFor(
      `${o.souls.length} souls connected`,
      async () => {
        const [{ count }] = await core.db('souls').where({ status: 'connected' }).count<{ count: string }[]>('*');
        return Number(count) >= o.souls.length ? true : undefined;
      },
      120_000,
      200,
    );
    return { api, baseUrl: url, adminToken: token, core, keeper, swarm, root, close };
  } catch (err) {
    await close();
    throw err;
  }
}
