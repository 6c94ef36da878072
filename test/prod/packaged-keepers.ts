// The rehearsal's two keepers as an operator installs them (issue 33): the keeper's .deb in two
// clean Debian 12 roots booted with systemd as PID 1 (test/modules/systemd-root.ts, without the
// machine's node or checkout), each with its own kid and ports, configured for the rehearsal's
// Temporal server (mutual TLS) and its secrets store in server mode (AppRole), and started by
// `systemctl start keeper`, the packaged unit with its sandbox. The roots share the machine's
// network, so the keepers answer on the ports scripts/prod-rehearsal.sh gives its own keepers.
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import type { KeeperAccess } from '../agents/harness';
import { SystemdRoot } from '../modules/systemd-root';
import { builtPackages } from '../packages/built';

export interface PackagedKeeper {
  name: 'a' | 'b';
  kid: string;
  root: SystemdRoot;
  access: KeeperAccess;
  /** The keeper's PID as this machine sees it (for the Redis row: its connections, by their ports). */
  hostPid(): number;
}

/** The keeper's .deb (--fast: the contents of `make package`), built once per test run and shared. */
export async function buildKeeperDeb(): Promise<string> {
  return (await builtPackages(['keeper'])).keeper;
}

/** Boots a root named `hostname`, as the install guide's test does. */
export async function bootRoot(hostname: string): Promise<SystemdRoot> {
  return SystemdRoot.boot(
    hostname,
    (dir) => {
      // nginx-light is in the cached root for the state-module tests; it would take port 80.
      fs.symlinkSync('/dev/null', path.join(dir, 'etc', 'systemd', 'system', 'nginx.service'));
      fs.writeFileSync(path.join(dir, 'etc', 'dpkg', 'dpkg.cfg.d', 'unsafe-io'), 'force-unsafe-io\n');
      fs.writeFileSync(path.join(dir, 'etc', 'hostname'), `${hostname}\n`);
      fs.appendFileSync(path.join(dir, 'etc', 'hosts'), `127.0.1.1\t${hostname}\n`);
    },
    { checkout: false },
  );
}

/**
 * The operator's edit of the rehearsal's keeper.yml (written by prod-rehearsal.sh for its own
 * keepers): every file path becomes the packaged one under /etc/keeper, and file:// sources are
 * declared shared (the test puts its service repository at the same path in both roots).
 */
function packagedConfig(state: string, name: string): Record<string, any> {
  const doc = yaml.load(fs.readFileSync(path.join(state, `keeper-${name}`, 'keeper.yml'), 'utf8')) as Record<
    string,
    any
  >;
  const grpcTls = { cert: '/etc/keeper/tls/keeper.crt', key: '/etc/keeper/tls/keeper.key' };
  doc.listen.grpc.bootstrap.tls = grpcTls;
  doc.listen.grpc.event_stream.tls = { ...grpcTls, ca: '/etc/keeper/tls/ca.pem' };
  doc.secretstore.auth.secret_id_file = '/etc/keeper/approle-secret-id';
  doc.secretstore.scenario_auth.secret_id_file = '/etc/keeper/approle-scenario-secret-id';
  doc.temporal.tls = {
    ...doc.temporal.tls,
    ca: '/etc/keeper/tls/temporal-ca.pem',
    cert: '/etc/keeper/tls/temporal-client.crt',
    key: '/etc/keeper/tls/temporal-client.key',
  };
  doc.services = {
    cache_dir: '/var/lib/keeper/services',
    git: { schemes: ['https', 'ssh', 'file'], hosts: [], file_shared: true },
  };
  return doc;
}

/** The files the operator brings, then the install commands of docs/install.md (modes as the spec says). */
const INSTALL = [
  'set -e',
  'cd /root/stage',
  'apt-get install -y -q ./keeper.deb',
  'install -m 0644 keeper.crt ca.pem /etc/keeper/tls/',
  'install -m 0640 -g keeper keeper.key /etc/keeper/tls/',
  'install -m 0644 temporal-ca.pem temporal-client.crt /etc/keeper/tls/',
  'install -m 0640 -g keeper temporal-client.key /etc/keeper/tls/',
  'install -m 0400 -o keeper -g keeper secret-id /etc/keeper/approle-secret-id',
  'install -m 0400 -o keeper -g keeper scenario-secret-id /etc/keeper/approle-scenario-secret-id',
  'install -m 0640 -g keeper keeper.yml /etc/keeper/keeper.yml',
  'runuser -u keeper -- keeper check-config --config=/etc/keeper/keeper.yml',
  'cd / && rm -rf /root/stage',
].join('\n');

/** Installs the keeper's .deb in `root` as keeper prod-`name` and starts its unit. */
export async function installKeeper(
  root: SystemdRoot,
  deb: string,
  state: string,
  name: 'a' | 'b',
  adminToken: string,
  repos: Record<string, string>,
): Promise<PackagedKeeper> {
  const stage = root.path('/root/stage');
  fs.mkdirSync(stage, { recursive: true, mode: 0o700 });
  const store = path.join(state, 'store');
  const temporal = path.join(state, 'tls', 'temporal');
  const files: Record<string, string> = {
    'keeper.deb': deb,
    'keeper.crt': path.join(store, 'tls', 'keeper.crt'),
    'keeper.key': path.join(store, 'tls', 'keeper.key'),
    'ca.pem': path.join(store, 'tls', 'ca.pem'),
    'temporal-ca.pem': path.join(temporal, 'ca.pem'),
    'temporal-client.crt': path.join(temporal, 'keeper.crt'),
    'temporal-client.key': path.join(temporal, 'keeper.key'),
    'secret-id': path.join(store, 'approle-secret-id'),
    'scenario-secret-id': path.join(store, 'approle-scenario-secret-id'),
  };
  for (const [to, from] of Object.entries(files)) fs.copyFileSync(from, path.join(stage, to));
  const doc = packagedConfig(state, name);
  fs.writeFileSync(path.join(stage, 'keeper.yml'), `# edited by the operator: ${doc.kid}\n${yaml.dump(doc)}`);
  // The services' repositories at the same path on every keeper's host, the keeper's own.
  for (const [at, from] of Object.entries(repos)) fs.cpSync(from, root.path(at), { recursive: true });
  await root.ok(['bash', '-c', INSTALL], { timeoutMs: 600_000 });
  for (const at of Object.keys(repos)) await root.ok(['chown', '-R', 'keeper:keeper', at]);
  // As its unit starts it: ExecStartPost waits for /readyz 200, so the start returns once it serves.
  const start = await root.run(['systemctl', 'start', 'keeper'], { timeoutMs: 330_000 });
  if (start.code !== 0) {
    const journal = await root.run(['journalctl', '-q', '-o', 'cat', '-u', 'keeper', '-n', '40']);
    throw new Error(`systemctl start keeper (prod-${name}) exited ${start.code}:\n${start.stderr}\n${journal.stdout}`);
  }
  return {
    name,
    kid: doc.kid,
    root,
    access: { baseUrl: `http://${doc.listen.openapi.addr}`, adminToken, config: doc } as unknown as KeeperAccess,
    hostPid: () => keeperHostPid(root),
  };
}

/** The packaged keeper's node process among the root's processes, by this machine's /proc. */
function keeperHostPid(root: SystemdRoot): number {
  const queue = [root.pid];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    let cmd = '';
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmd.includes('/usr/lib/keeper/') && cmd.includes('\0run\0')) return pid;
    try {
      queue.push(
        ...fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
      );
    } catch {
      /* gone */
    }
  }
  throw new Error(`no keeper process in the root ${root.dir}`);
}
