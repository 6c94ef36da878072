// docs/install.md run as written (issue 37): the guide's own command blocks, extracted by
// guide-script.ts, run as root in clean Debian 12 roots booted with systemd as PID 1
// (test/modules/systemd-root.ts, the recipe of ../shared/tools/boot-root.sh): a first keeper, a
// second keeper joining it and a soul, each in a root of its own (three roots: unpacking and booting
// one takes seconds, and a second keeper on the first one's host would need a second unit the guide
// does not describe). Then each promise the guide makes is checked from outside: the keepers serve,
// the second with its own kid, the soul onboards, reports its keeper and applies a run, and
// `apt purge` leaves nothing readable. debian.test.ts holds the finer package checks (upgrade,
// remove, lintian); this file only follows the guide.
//
// What the guide leaves to the operator is filled here, as its "The guide as a test" paragraph
// says: the files in the folder the commands run in (the packages, the keeper's leaf and CAs, the
// AppRole secret_ids: the local stack's), `editor <file>` (the operator's edit: the shipped file with
// this stack's addresses, ports and a fresh database), and `$TOKEN` (from POST /v1/souls).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { api, endpointOf, uniqueSid, waitFor, waitForStatus, type KeeperAccess } from '../agents/harness';
import { SystemdRoot } from '../modules/systemd-root';
import { gitRepoFrom, settled } from '../runs/keeper';
import { cleanupKeeperFiles, prepareKeeperConfig, type TestKeeperFiles } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { stackFile, stackTemporalTlsConfig } from '../support/stack-env';
import { builtPackages, packageVersion } from './built';
import { installGuideScripts, type GuideRole } from './guide-script';

const shipped = (pkg: string, file: string) =>
  yaml.load(fs.readFileSync(path.join(repoRoot(), 'packaging', pkg, file), 'utf8')) as Record<string, any>;

/** The operator's edit of the shipped keeper.yml: this stack, this keeper's kid and ports, the shared rest. */
function keeperYml(files: TestKeeperFiles, kid: string, taskQueue: string): string {
  const t = files.doc;
  const doc = shipped('keeper', 'keeper.yml');
  doc.kid = kid;
  doc.listen.openapi.addr = t.listen.openapi.addr;
  doc.listen.metrics.addr = t.listen.metrics.addr;
  doc.listen.grpc.bootstrap.addr = t.listen.grpc.bootstrap.addr;
  doc.listen.grpc.event_stream.addr = t.listen.grpc.event_stream.addr;
  doc.database.dsn_ref = t.database.dsn_ref;
  doc.cache = t.cache;
  doc.secretstore.addr = t.secretstore.addr;
  doc.auth.jwt.signing_key_ref = t.auth.jwt.signing_key_ref;
  doc.temporal.address = t.temporal.address;
  doc.temporal.task_queue = taskQueue;
  const tls = stackTemporalTlsConfig();
  if (tls) doc.temporal.tls.server_name = tls.server_name;
  else delete doc.temporal.tls;
  // The services' sources: a git repository on a path every keeper has (docs/install.md, "A second keeper"),
  // declared so with file_shared: without it a file:// service is refused while two keepers are live.
  doc.services = {
    cache_dir: '/var/lib/keeper/services',
    git: { schemes: ['https', 'ssh', 'file'], hosts: [], file_shared: true },
  };
  return `# edited by the operator: ${kid}\n${yaml.dump(doc)}`;
}

describe('docs/install.md as written: two keepers and a soul installed by its commands in Debian 12 roots with systemd', function () {
  this.timeout(1_500_000);
  const scripts = installGuideScripts();
  const sid = uniqueSid('guide');
  const kids = { one: `guide-1-${sid.slice(6, 12)}`, two: `guide-2-${sid.slice(6, 12)}` };
  let out: string;
  let k1: TestKeeperFiles;
  let k2: TestKeeperFiles;
  const roots: Partial<Record<GuideRole, SystemdRoot>> = {};
  let admin: string;
  let failed = false;
  const access = (files: TestKeeperFiles, kid: string): KeeperAccess =>
    ({ baseUrl: `http://${files.doc.listen.openapi.addr}`, adminToken: admin, config: { ...files.doc, kid } }) as any;

  /** Boots a root named `hostname`, without the machine's node and checkout the state-module tests mount. */
  async function boot(role: GuideRole, hostname: string): Promise<SystemdRoot> {
    const root = await SystemdRoot.boot(hostname, (dir) => {
      // nginx-light is in the cached root for the state-module tests; it would take port 80 of the
      // machine's network here.
      fs.symlinkSync('/dev/null', path.join(dir, 'etc', 'systemd', 'system', 'nginx.service'));
      // A disposable root: dpkg need not fsync each of the keeper's 14,000 files (Debian's container
      // images set the same); the guide's commands are unchanged.
      fs.writeFileSync(path.join(dir, 'etc', 'dpkg', 'dpkg.cfg.d', 'unsafe-io'), 'force-unsafe-io\n');
      fs.writeFileSync(path.join(dir, 'etc', 'hostname'), `${hostname}\n`);
      fs.appendFileSync(path.join(dir, 'etc', 'hosts'), `127.0.1.1\t${hostname}\n`);
    });
    roots[role] = root;
    // The machine's node and checkout, which systemd-root.ts mounts for the state-module tests:
    // whatever of them it mounted goes, so the only node in the root is the packages' own.
    await root.ok([
      'sh',
      '-c',
      'for m in /usr/local/bin/node /opt/keeper; do if grep -q " $m " /proc/self/mountinfo; then umount "$m"; fi; done',
    ]);
    assert.equal((await root.run(['sh', '-c', 'command -v node'])).stdout, '', 'no node in the root but the packages’');
    return root;
  }

  /** The operator's folder: the files the guide's commands name, then the role's script from the guide. */
  function stage(root: SystemdRoot, role: GuideRole, files: Record<string, string>, edits: Record<string, string>) {
    const dir = root.path('/root/guide');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const [name, from] of Object.entries(files)) fs.copyFileSync(from, path.join(dir, name));
    for (const [file, text] of Object.entries(edits)) {
      fs.mkdirSync(path.join(dir, 'edited', path.dirname(file)), { recursive: true });
      fs.writeFileSync(path.join(dir, 'edited', file), text);
    }
    fs.writeFileSync(
      path.join(dir, `${role}.sh`),
      [
        'cd /root/guide',
        '# `editor FILE` in the guide: the operator edits FILE; here it becomes the prepared edit.',
        'editor() { cp "/root/guide/edited$1" "$1"; }',
        'if [ -f token ]; then TOKEN="$(cat token)"; fi',
        scripts[role],
      ].join('\n'),
    );
  }

  /** Runs the role's script as root (bash -e: the first failing command fails it), its lines echoed. */
  async function follow(role: GuideRole): Promise<string> {
    const root = roots[role]!;
    const r = await root.run(['bash', '-e', '-v', `/root/guide/${role}.sh`], { timeoutMs: 600_000 });
    if (r.code !== 0) {
      const unit = role === 'soul' ? 'soul' : 'keeper';
      const journal = await root.run(['journalctl', '-q', '-o', 'cat', '-u', unit, '-n', '40']);
      throw new Error(
        `the guide's ${role} commands failed (exit ${r.code}):\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-4000)}\n--- journalctl -u ${unit} ---\n${journal.stdout}`,
      );
    }
    return r.stdout + r.stderr;
  }

  let debs: Record<'keeper' | 'soul', string>;
  const keeperFiles = () => {
    const tls = stackFile('tls');
    const temporal = stackTemporalTlsConfig();
    return {
      [path.basename(debs.keeper)]: debs.keeper,
      'keeper.crt': path.join(tls, 'keeper.crt'),
      'keeper.key': path.join(tls, 'keeper.key'),
      'ca.pem': path.join(tls, 'ca.pem'),
      // The stack's Temporal frontend may run without TLS: the edit then removes temporal.tls, and the
      // files the guide installs for it are stand-ins (the keeper's own leaf), installed and unused.
      'temporal-ca.pem': temporal?.ca ?? path.join(tls, 'ca.pem'),
      'temporal-client.crt': temporal?.cert ?? path.join(tls, 'keeper.crt'),
      'temporal-client.key': temporal?.key ?? path.join(tls, 'keeper.key'),
      'secret-id': stackFile('approle-secret-id'),
      'scenario-secret-id': stackFile('approle-scenario-secret-id'),
    };
  };

  before(async () => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'guide-'));
    // The three roots unpack and boot while the packages build (built.ts: once per test run, shared
    // with debian.test.ts; package.json's version, as `make package` builds it).
    await Promise.all([
      builtPackages(['keeper', 'soul'], packageVersion()).then((d) => {
        debs = d;
      }),
      boot('keeper-1', 'keeper-1.keeper.test'),
      boot('keeper-2', 'keeper-2.keeper.test'),
      boot('soul', sid),
    ]);
    k1 = await prepareKeeperConfig({ kid: kids.one });
    // The second keeper shares the database, the secrets and the task queue; its ports are its own
    // (the roots share the machine's network, as two keepers on one host would).
    k2 = await prepareKeeperConfig({ kid: kids.two, db: k1.db, secretName: k1.secretName });
    // A service repository, at the same path on both keepers' hosts.
    gitRepoFrom(path.join(repoRoot(), 'test', 'fixtures', 'services', 'motd'), path.join(out, 'motd'), 'v3');
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });
  after(async () => {
    if (failed)
      for (const [role, root] of Object.entries(roots)) {
        const unit = role === 'soul' ? 'soul' : 'keeper';
        const j = await root.run(['journalctl', '-q', '-o', 'cat', '-u', unit, '-n', '30']);
        process.stdout.write(j.stdout.replace(/^/gm, `      ${role}: `));
      }
    for (const root of Object.values(roots)) await root.stop().catch(() => undefined);
    if (k2) fs.rmSync(k2.dir, { recursive: true, force: true });
    if (k1) await cleanupKeeperFiles(k1);
    if (out) fs.rmSync(out, { recursive: true, force: true });
  });

  it('keeper-1: the guide’s commands install, check, initialize and start the keeper; /readyz answers 200', async () => {
    const root = roots['keeper-1']!;
    fs.cpSync(path.join(out, 'motd'), root.path('/srv/git/motd'), { recursive: true });
    stage(root, 'keeper-1', keeperFiles(), {
      '/etc/keeper/keeper.yml': keeperYml(k1, kids.one, k1.doc.temporal.task_queue),
    });
    const log = await follow('keeper-1');
    assert.match(log, /\/etc\/keeper\/keeper\.yml: valid/, 'check-config passed before the start');
    assert.match(log, /created operator alice \(role cluster-admin\)/);
    assert.equal((await root.run(['systemctl', 'is-active', 'keeper'])).stdout.trim(), 'active');
    assert.equal((await root.run(['systemctl', 'is-enabled', 'keeper'])).stdout.trim(), 'enabled');
    const ready = await fetch(`http://${k1.doc.listen.openapi.addr}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    admin = fs.readFileSync(root.path('/var/lib/keeper/alice.jwt'), 'utf8').trim();
    assert.equal((await api(access(k1, kids.one), 'GET', '/v1/souls')).status, 200);
    // As installed by the guide: the secret_ids the keeper's own 0400, the TLS key root:keeper 0640.
    assert.equal(
      await root.ok([
        'stat',
        '-c',
        '%n %U:%G %a',
        '/etc/keeper/approle-secret-id',
        '/etc/keeper/approle-scenario-secret-id',
        '/etc/keeper/tls/keeper.key',
      ]),
      '/etc/keeper/approle-secret-id keeper:keeper 400\n/etc/keeper/approle-scenario-secret-id keeper:keeper 400\n/etc/keeper/tls/keeper.key root:keeper 640\n',
    );
  });

  it('keeper-2: the guide’s commands for a second keeper start it without keeper init; it serves with its own kid and the same operators', async () => {
    const root = roots['keeper-2']!;
    fs.cpSync(path.join(out, 'motd'), root.path('/srv/git/motd'), { recursive: true });
    stage(root, 'keeper-2', keeperFiles(), {
      '/etc/keeper/keeper.yml': keeperYml(k2, kids.two, k1.doc.temporal.task_queue),
    });
    const log = await follow('keeper-2');
    assert.match(log, /\nactive\n/, 'systemctl is-active keeper');
    const ready = await fetch(`http://${k2.doc.listen.openapi.addr}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    const metrics = await (await fetch(`http://${k2.doc.listen.metrics.addr}/metrics`)).text();
    assert.match(metrics, new RegExp(`keeper_build_info\\{[^}]*kid="${kids.two}"`));
    // alice's credential from the first keeper's `keeper init` works here: the operators are shared.
    assert.equal((await api(access(k2, kids.two), 'GET', '/v1/souls')).status, 200);
  });

  it('soul: registered on the first keeper, the guide’s commands onboard it; it connects to the keeper it prefers and soul status says which', async () => {
    const root = roots['soul']!;
    const reg = await api(access(k1, kids.one), 'POST', '/v1/souls', { sid, transport: 'agent', covens: ['guide'] });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    const soulYml = shipped('soul', 'soul.yml');
    soulYml.sid = sid;
    // Both keepers, the second preferred (docs/agents.md: lowest priority first).
    soulYml.keeper.endpoints = [endpointOf(access(k2, kids.two), 10), endpointOf(access(k1, kids.one), 20)];
    stage(
      root,
      'soul',
      {
        [path.basename(debs.soul)]: debs.soul,
        'keeper-ca.pem': stackFile('tls', 'ca.pem'),
      },
      { '/etc/soul/soul.yml': `# edited by the operator for ${sid}\n${yaml.dump(soulYml)}` },
    );
    fs.writeFileSync(root.path('/root/guide/token'), `${reg.body.bootstrap_token}\n`, { mode: 0o600 });
    const log = await follow('soul');
    assert.ok(!log.includes(reg.body.bootstrap_token), 'the token is never printed');
    const { soul } = await waitForStatus(access(k1, kids.one), sid, 'connected', 60_000);
    assert.equal(soul.connected_kid, kids.two);
    const status = await waitFor(
      'soul status to say connected',
      async () => {
        const r = await root.run(['soul', 'status', '--config=/etc/soul/soul.yml']);
        return r.code === 0 ? r : undefined;
      },
      30_000,
      500,
    );
    assert.match(status.stdout, new RegExp(kids.two));
  });

  it('a run: the service from a git source on both keepers’ hosts, applied by the soul', async () => {
    // The guide's rule for a file:// source: readable by and owned by the keeper user, outside /tmp.
    for (const role of ['keeper-1', 'keeper-2'] as const)
      await roots[role]!.ok(['chown', '-R', 'keeper:keeper', '/srv/git']);
    const k = access(k1, kids.one);
    const svc = await api(k, 'POST', '/v1/services', { name: 'motd', git: 'file:///srv/git/motd', ref: 'v3' });
    assert.equal(svc.status, 201, JSON.stringify(svc.body));
    const input = { root: '/srv/motd', message: 'installed by the guide', package: 'git' };
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'guide-motd',
      service: 'motd',
      covens: ['guide'],
      input,
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const inc = await settled(k, 'guide-motd', 180_000);
    assert.equal(inc.status, 'ready', JSON.stringify(inc));
    assert.match(fs.readFileSync(roots.soul!.path('/srv/motd/etc/motd'), 'utf8'), /installed by the guide/);
  });

  it('apt purge: the soul and the first keeper leave nothing readable: no state, no secrets, nothing owned by their deleted accounts', async () => {
    const checks: Array<[GuideRole, string, string, string[]]> = [
      ['soul', 'soul', '/etc/soul', ['/etc/soul/keeper-ca.pem']],
      [
        'keeper-1',
        'keeper',
        '/etc/keeper',
        [
          '/etc/keeper/tls/ca.pem',
          '/etc/keeper/tls/keeper.crt',
          '/etc/keeper/tls/temporal-ca.pem',
          '/etc/keeper/tls/temporal-client.crt',
        ],
      ],
    ];
    for (const [role, pkg, etc, operatorFiles] of checks) {
      const root = roots[role]!;
      const [uid, gid] = (await root.ok(['sh', '-c', `id -u ${pkg}; getent group ${pkg} | cut -d: -f3`]))
        .trim()
        .split('\n');
      const purge = await root.run(['apt', 'purge', '-y', pkg], { timeoutMs: 300_000 });
      assert.equal(purge.code, 0, purge.stdout + purge.stderr);
      assert.equal((await root.run(['systemctl', 'is-active', pkg])).stdout.trim(), 'inactive');
      assert.ok(!fs.existsSync(root.path(`/var/lib/${pkg}`)), `/var/lib/${pkg} is gone`);
      assert.equal((await root.run(['getent', 'passwd', pkg])).code, 2, `the ${pkg} account is gone`);
      const left = await root.ok(['find', '/etc', '/var', '(', '-uid', uid!, '-o', '-gid', gid!, ')', '-print']);
      assert.equal(left, '', `nothing is owned by ${pkg}'s deleted uid or gid`);
      // What stays is what the guide says stays: the operator's public certificates, root's.
      const files = (await root.ok(['find', etc, '-type', 'f', '-printf', '%p %u:%g %m\n'])).trim().split('\n').sort();
      assert.deepEqual(
        files,
        operatorFiles.map((f) => `${f} root:root 644`),
      );
    }
  });
});
