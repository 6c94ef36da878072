// A Temporal frontend that requires client certificates, for tests (issue 13, item 6). The Temporal
// CLI's dev server has no TLS options, so it runs in a network and PID namespace of its own
// (`unshare`), where nothing outside can reach its ports; socat, in the same namespace, bridges a
// Unix socket (0600, in a 0700 directory) to it, and HAProxy on 127.0.0.1 terminates mutual TLS
// (verify required, ALPN h2) and forwards to that socket. Only the proxy reaches the server, and
// the proxy admits only certificates signed by the fixture's CA. Everything dies with `stop()`:
// the dev server is the namespace's PID 1, so its end ends socat too.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports';
import { repoRoot } from './repo';

export const TEMPORAL_TLS_SERVER_NAME = 'temporal.keeper.test';

export interface TemporalMtls {
  /** 127.0.0.1:<port> of the TLS frontend (HAProxy). */
  address: string;
  serverName: string;
  dir: string;
  /** The CA that signed the frontend's and the keeper's certificates. */
  ca: string;
  client: { cert: string; key: string };
  /** A client certificate from another CA: the frontend must refuse it. */
  rogue: { cert: string; key: string };
  /** Milliseconds from spawn to a healthy frontend through the proxy. */
  startMs: number;
  /** PIDs of the proxy and the namespace (for measuring memory). */
  pids: { proxy: number; namespace: number };
  stop(): Promise<void>;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A CA and leaves signed by it: EC P-256, one day, the names and key usages each side checks. */
function issue(dir: string, name: string, ca: string, cn: string, ext: string): void {
  openssl(
    dir,
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${cn}`,
  );
  fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.pem`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-days',
    '1',
    '-out',
    `${name}.crt`,
    '-extfile',
    `${name}.ext`,
  );
}

function makeCa(dir: string, name: string): void {
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
}

export function temporalBinary(): string {
  return execFileSync(path.join(repoRoot(), 'scripts', 'build-tools.sh'), ['path-temporal'], {
    encoding: 'utf8',
  }).trim();
}

const SEARCH_ATTRIBUTES = [
  'KeeperIncarnation=Keyword',
  'KeeperOperation=Keyword',
  'KeeperServiceRef=Keyword',
  'KeeperService=Keyword',
];

// Brings loopback up inside the new namespace, starts the bridge, then becomes the dev server.
// The socket path and the server's argv arrive as positional parameters, never spliced into the text.
const NAMESPACE_SCRIPT =
  'ip link set lo up || exit 1; sock="$1"; shift; ' +
  'socat "UNIX-LISTEN:$sock,fork,mode=600,unlink-early" TCP:127.0.0.1:7233 & exec "$@"';

function childrenOf(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function waitExit(child: ChildProcess, ms: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

export async function startTemporalMtls(): Promise<TemporalMtls> {
  const t0 = Date.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-mtls-'));
  fs.chmodSync(dir, 0o700);
  makeCa(dir, 'ca');
  makeCa(dir, 'rogue-ca');
  issue(
    dir,
    'server',
    'ca',
    TEMPORAL_TLS_SERVER_NAME,
    `subjectAltName=DNS:${TEMPORAL_TLS_SERVER_NAME}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`,
  );
  issue(dir, 'client', 'ca', 'keeper', 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n');
  issue(dir, 'rogue', 'rogue-ca', 'keeper', 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n');
  fs.writeFileSync(
    path.join(dir, 'server.pem'),
    fs.readFileSync(path.join(dir, 'server.crt'), 'utf8') + fs.readFileSync(path.join(dir, 'server.key'), 'utf8'),
    { mode: 0o600 },
  );

  const sock = path.join(dir, 'temporal.sock');
  const logs: string[] = [];
  const keep = (what: string) => (d: Buffer) => {
    logs.push(`${what}: ${d.toString()}`);
    if (logs.length > 200) logs.shift();
  };
  const sa = SEARCH_ATTRIBUTES.flatMap((a) => ['--search-attribute', a]);
  const ns = spawn(
    'unshare',
    [
      '--net',
      '--pid',
      '--fork',
      '--kill-child',
      '--',
      'sh',
      '-c',
      NAMESPACE_SCRIPT,
      'sh',
      sock,
      temporalBinary(),
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      '7233',
      '--headless',
      '--log-level',
      'warn',
      ...sa,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  ns.stdout!.on('data', keep('temporal'));
  ns.stderr!.on('data', keep('temporal'));

  const port = await freePort();
  const cfg = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(
    cfg,
    [
      'global',
      '  maxconn 1024',
      'defaults',
      '  mode tcp',
      '  timeout connect 5s',
      '  timeout client 1h',
      '  timeout server 1h',
      'frontend temporal',
      `  bind 127.0.0.1:${port} ssl crt ${path.join(dir, 'server.pem')} ca-file ${path.join(dir, 'ca.pem')} verify required alpn h2`,
      '  default_backend dev',
      'backend dev',
      `  server dev ${sock}`,
      '',
    ].join('\n'),
  );
  // Debian installs it in /usr/sbin, which a non-root PATH may lack.
  const proxy = spawn(fs.existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy', ['-f', cfg, '-db'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proxy.stdout!.on('data', keep('haproxy'));
  proxy.stderr!.on('data', keep('haproxy'));

  const stop = async () => {
    proxy.kill('SIGTERM');
    // `unshare --fork` waits out SIGTERM; the dev server (the namespace's PID 1, unshare's child)
    // takes it and ends cleanly, and the namespace ends with it.
    for (const child of childrenOf(ns.pid!)) {
      try {
        process.kill(child, 'SIGTERM');
      } catch {
        /* gone */
      }
    }
    await Promise.all([waitExit(proxy, 5000), waitExit(ns, 5000)]);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const tls = [
    '--tls-ca-path',
    path.join(dir, 'ca.pem'),
    '--tls-cert-path',
    path.join(dir, 'client.crt'),
    '--tls-key-path',
    path.join(dir, 'client.key'),
    '--tls-server-name',
    TEMPORAL_TLS_SERVER_NAME,
  ];
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      execFileSync(temporalBinary(), ['operator', 'cluster', 'health', '--address', `127.0.0.1:${port}`, ...tls], {
        stdio: 'pipe',
        timeout: 5000,
      });
      break;
    } catch {
      if (Date.now() > deadline || ns.exitCode !== null || proxy.exitCode !== null) {
        await stop();
        throw new Error(`the mTLS Temporal frontend did not become healthy:\n${logs.join('').slice(-3000)}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return {
    address: `127.0.0.1:${port}`,
    serverName: TEMPORAL_TLS_SERVER_NAME,
    dir,
    ca: path.join(dir, 'ca.pem'),
    client: { cert: path.join(dir, 'client.crt'), key: path.join(dir, 'client.key') },
    rogue: { cert: path.join(dir, 'rogue.crt'), key: path.join(dir, 'rogue.key') },
    startMs: Date.now() - t0,
    pids: { proxy: proxy.pid!, namespace: ns.pid! },
    stop,
  };
}
