// Souls for integration tests: real `bin/soul` processes, each in its own UTS namespace with its own
// hostname (`unshare --uts`), against a real keeper from test/support. Names are random per run so
// suites sharing the stack's Redis never see each other's presence leases.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { repoRoot } from '../support/repo';
import { stackFile } from '../support/stack-env';
import type { TestKeeper } from '../support/keeper';

export const SOUL_BIN = () => path.join(repoRoot(), 'bin', 'soul');

export function uniqueSid(name: string): string {
  return `${name}-${randomBytes(3).toString('hex')}.keeper.test`;
}

export function port(addr: string): number {
  return Number(addr.slice(addr.lastIndexOf(':') + 1));
}

/** What the helpers below need of a keeper: an in-process TestKeeper, or one run as its own process. */
export type KeeperAccess = Pick<TestKeeper, 'baseUrl' | 'adminToken' | 'config'>;

export interface EndpointSpec {
  host: string;
  bootstrap_port: number;
  event_stream_port: number;
  priority: number;
}

export function endpointOf(k: KeeperAccess, priority = 10, host = 'localhost'): EndpointSpec {
  return {
    host,
    bootstrap_port: port(k.config.listen.grpc.bootstrap.addr),
    event_stream_port: port(k.config.listen.grpc.event_stream.addr),
    priority,
  };
}

/** Writes <dir>/soul.yml; `ca` defaults to the stack's CA, null leaves keeper.tls.ca out. */
export function writeSoulConfig(
  dir: string,
  sid: string,
  endpoints: EndpointSpec[],
  ca: string | null = stackFile('tls', 'ca.pem'),
): string {
  fs.mkdirSync(dir, { recursive: true });
  const doc: Record<string, unknown> = {
    sid,
    paths: { modules: path.join(dir, 'modules'), seed: path.join(dir, 'seed') },
    keeper: { endpoints, ...(ca === null ? {} : { tls: { ca } }) },
  };
  const file = path.join(dir, 'soul.yml');
  fs.writeFileSync(file, yaml.dump(doc));
  return file;
}

/** Runs `soul <args>` with `hostname` as the host name of its own UTS namespace. */
export function spawnSoul(
  hostname: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; stdin?: string } = {},
): ChildProcess {
  // $0 is the host name and "$@" the launcher and its arguments: no value is parsed by the shell.
  const child = spawn(
    'unshare',
    ['--uts', 'sh', '-c', 'hostname "$0" && exec node "$@"', hostname, SOUL_BIN(), ...args],
    {
      env: { ...process.env, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  else child.stdin!.end();
  return child;
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function finished(child: ChildProcess, live?: { stderr: string }): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    stdout += d;
  });
  child.stderr!.on('data', (d) => {
    stderr += d;
    if (live) live.stderr = stderr;
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

export function soulInit(
  hostname: string,
  config: string,
  token: string | undefined,
  opts: { env?: NodeJS.ProcessEnv; stdin?: string } = {},
): Promise<Finished> {
  const args = ['init', `--config=${config}`, ...(token === undefined ? [] : [`--token=${token}`])];
  return finished(spawnSoul(hostname, args, opts));
}

/** A running `soul run`; `done` resolves when it exits. */
export interface RunningSoul {
  child: ChildProcess;
  done: Promise<Finished>;
  log: { stderr: string };
  kill(signal?: NodeJS.Signals): Promise<Finished>;
}

export function soulRun(hostname: string, config: string): RunningSoul {
  const child = spawnSoul(hostname, ['run', `--config=${config}`]);
  const log = { stderr: '' };
  const done = finished(child, log);
  return {
    child,
    done,
    log,
    kill: (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return done;
    },
  };
}

export async function api(
  k: KeeperAccess,
  method: string,
  p: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const send = () =>
    fetch(k.baseUrl + p, {
      method,
      headers: {
        Authorization: `Bearer ${k.adminToken}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  // A test that blocked its event loop (spawnSync of dpkg-query, say) for longer than the slack
  // between the client's keep-alive timer and the in-process keeper's may send on a pooled socket
  // the keeper closes in the same tick ("other side closed"). A GET changes nothing, so it is sent
  // once more on a fresh socket; anything else fails as it came.
  const res = await send().catch((err: Error) => {
    if (method !== 'GET' || !/fetch failed/.test(err.message)) throw err;
    return send();
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Registers the soul through the Operator API and returns its bootstrap token. */
export async function register(k: KeeperAccess, sid: string): Promise<string> {
  const r = await api(k, 'POST', '/v1/souls', { sid, transport: 'agent', covens: ['test'] });
  if (r.status !== 201) throw new Error(`POST /v1/souls: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.bootstrap_token as string;
}

export async function soulStatus(k: KeeperAccess, sid: string): Promise<any> {
  const r = await api(k, 'GET', `/v1/souls/${sid}`);
  if (r.status !== 200) throw new Error(`GET /v1/souls/${sid}: ${r.status}`);
  return r.body;
}

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits until GET /v1/souls/{sid} shows `status`; returns the record and how long it took. */
export async function waitForStatus(
  k: KeeperAccess,
  sid: string,
  status: string,
  timeoutMs = 20_000,
  soul?: RunningSoul,
): Promise<{ soul: any; ms: number }> {
  const t0 = Date.now();
  try {
    const rec = await waitFor(
      `${sid} to be ${status}`,
      async () => {
        const s = await soulStatus(k, sid);
        return s.status === status ? s : undefined;
      },
      timeoutMs,
    );
    return { soul: rec, ms: Date.now() - t0 };
  } catch (err) {
    // The soul's own log says why it is not where the test expects it.
    if (soul) (err as Error).message += `\n--- soul log ---\n${soul.log.stderr.slice(-3000)}`;
    throw err;
  }
}

export function openssl(args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('openssl', args, (err, stdout, stderr) =>
      err ? reject(new Error(stderr || err.message)) : resolve(stdout),
    ),
  );
}

/** A throwaway self-signed CA that is not the keeper's root. */
export async function foreignCa(dir: string): Promise<string> {
  const file = path.join(dir, 'foreign-ca.pem');
  await openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    '/CN=Some Other Root',
    '-days',
    '1',
    '-keyout',
    path.join(dir, 'foreign-ca.key'),
    '-out',
    file,
  ]);
  return file;
}
