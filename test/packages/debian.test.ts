// The Debian packages as an operator meets them (issue 14, docs/install.md): built by
// scripts/package.sh (v1, then v2 with a bumped version), installed with dpkg into a clean Debian 12
// root (test/packages/debian-root.ts), onboarded and run there against a keeper on the local stack,
// upgraded with a modified conffile, removed and purged. The packaged keeper runs there too, against
// the stack, as keeper.service runs it, and its readiness check is the unit's own.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import {
  cleanupKeeperFiles,
  prepareKeeperConfig,
  startTestKeeper,
  type TestKeeper,
  type TestKeeperFiles,
} from '../support/keeper';
import { repoRoot } from '../support/repo';
import { stackFile, stackTemporalTlsConfig } from '../support/stack-env';
import { endpointOf, register, soulStatus, uniqueSid, waitForStatus } from '../agents/harness';
import { builtPackages, type PackageName, packageVersion } from './built';
import { DebianRoot, RootProcess } from './debian-root';
import { lintianRun } from './lintian';

const VERSION = packageVersion();
const V1 = VERSION;
const V2 = `${VERSION}+2`;

/** On failure, the process's own log says why. */
async function withLog<T>(p: Promise<T>, proc: RootProcess): Promise<T> {
  try {
    return await p;
  } catch (err) {
    (err as Error).message += `\n--- log ---\n${proc.log.out.slice(-3000)}`;
    throw err;
  }
}

const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('Debian packages: install, onboard, upgrade, remove and purge in a clean Debian 12 root', function () {
  // First run on a machine: mmdebstrap (about 2 minutes, then cached) and five package builds.
  this.timeout(900_000);
  let out: string;
  let root: DebianRoot;
  let k: TestKeeper;
  let lintian: Promise<unknown> | undefined;
  let debs: Record<string, Partial<Record<PackageName, string>>>;
  const deb = (version: string, pkg: PackageName) =>
    debs[version]?.[pkg] ?? assert.fail(`${pkg} ${version} was not built`);
  /** Puts a built package into the root and installs it with dpkg, stdin closed, as apt would. */
  const install = async (version: string, pkg: PackageName) => {
    root.put(deb(version, pkg), `/tmp/${pkg}_${version}.deb`);
    return root.ok(['dpkg', '-i', `/tmp/${pkg}_${version}.deb`]);
  };

  before(async function () {
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'packages-'));
    // Shared with the guide's and the nginx suite's installs (built.ts): built once per test run.
    debs = {
      [V1]: await builtPackages(['keeper', 'soul', 'soul-lint'], V1),
      [V2]: await builtPackages(['keeper', 'soul'], V2),
    };
    // lintian.test.ts's verdict, started now: it runs while the installs wait on the network.
    lintian = lintianRun();
    root = await DebianRoot.create();
    k = await startTestKeeper();
  });
  after(async () => {
    await k?.stop();
    await root?.destroy();
    if (out) fs.rmSync(out, { recursive: true, force: true });
    // No lintian left behind when this suite runs alone.
    await lintian?.catch(() => undefined);
  });

  describe('soul', () => {
    const sid = uniqueSid('pkg-soul');
    let running: RootProcess | undefined;
    let seedHashes: Record<string, string>;
    let configBytes: Buffer;
    // As soul.service's ExecStart runs it: root, in /var/lib/soul, the packaged launcher.
    const startSoul = () =>
      new RootProcess(
        root.spawn(['sh', '-c', 'cd /var/lib/soul && exec /usr/bin/soul run --config=/etc/soul/soul.yml'], sid),
      );
    after(async () => {
      await running?.stop();
    });

    it('v1 installs its program, conffile, account and 0700 state; --version is the package version', async () => {
      await install(V1, 'soul');
      const version = await root.run(['soul', '--version']);
      assert.equal(version.stdout.trim(), V1);
      assert.equal(version.stderr, '', 'no V8 flag warning on every soul command');
      assert.equal(await root.ok(['dpkg-query', '-W', '-f=${Version}', 'soul']), V1);
      assert.match(
        await root.ok(['dpkg-query', '-W', '-f=${Conffiles}', 'soul']),
        /^ \/etc\/soul\/soul\.yml [0-9a-f]{32}$/m,
      );
      assert.match(
        await root.ok(['getent', 'passwd', 'soul']),
        /^soul:x:\d+:\d+:[^:]*:\/var\/lib\/soul:\/usr\/sbin\/nologin$/m,
      );
      assert.equal(fs.statSync(root.path('/var/lib/soul')).mode & 0o777, 0o700);
      // The runtime is the package's own: nothing was installed beside the root's minbase, adduser and git.
      const onPath = await root.run(['sh', '-c', 'command -v node']);
      assert.ok(onPath.code !== 0 && onPath.stdout === '', `no node on the root's PATH: ${onPath.stdout}`);
      assert.match(await root.ok(['/usr/lib/soul/node/bin/node', '--version']), /^v2\d\./);
      // Only what the soul imports: none of the keeper's server, workflow or database modules.
      // Nor grpc-js and protobufjs: `soul init` and `soul run` speak gRPC with the soul's own client and codec.
      for (const m of [
        'express',
        '@temporalio',
        'knex',
        'pg',
        'redis',
        'webpack',
        'typescript',
        'mocha',
        '@grpc',
        'protobufjs',
      ]) {
        assert.ok(!fs.existsSync(root.path(`/usr/lib/soul/app/node_modules/${m}`)), `the soul package carries no ${m}`);
      }
      assert.ok(fs.existsSync(root.path('/usr/lib/soul/app/node_modules/js-yaml/package.json')));
      const shipped = (await root.ok(['dpkg-query', '-L', 'soul'])).split('\n');
      const own = shipped.filter((f) => f.startsWith('/usr/lib/soul/app/') && !f.includes('/node_modules/'));
      assert.ok(own.includes('/usr/lib/soul/app/dist/agent/cli.js'));
      assert.deepEqual(
        own.filter((f) => /\.ts$|\.map$|\.test\.js$|\/test(\/|$)/.test(f)),
        [],
        'none of our TypeScript, source maps or tests',
      );
    });

    it('soul init with a real token, then soul run as the unit starts it: connected', async () => {
      const token = await register(k, sid);
      root.put(stackFile('tls', 'ca.pem'), '/etc/soul/keeper-ca.pem');
      // The operator's edit of the conffile: this host's SID and the test keeper's endpoints.
      const doc = yaml.load(fs.readFileSync(root.path('/etc/soul/soul.yml'), 'utf8')) as Record<string, any>;
      doc.sid = sid;
      doc.keeper.endpoints = [endpointOf(k)];
      fs.writeFileSync(root.path('/etc/soul/soul.yml'), `# edited by the operator for ${sid}\n${yaml.dump(doc)}`);
      configBytes = fs.readFileSync(root.path('/etc/soul/soul.yml'));

      const init = await root.run(['soul', 'init', '--config=/etc/soul/soul.yml', `--token=${token}`], {
        hostname: sid,
      });
      assert.equal(init.code, 0, init.stderr);
      assert.match(
        init.stdout,
        new RegExp(`^onboarded ${sid.replace(/\./g, '\\.')} through localhost:\\d+: certificate `),
      );
      assert.match(
        init.stdout,
        /Start the soul with: systemctl enable --now soul\n$/,
        'the packaged soul runs as its unit',
      );
      assert.ok(!init.stdout.includes(token) && !init.stderr.includes(token), 'the token is never printed');
      const seed = root.path('/var/lib/soul/seed');
      assert.equal(fs.statSync(path.join(seed, 'key.pem')).mode & 0o777, 0o600);
      seedHashes = Object.fromEntries(['key.pem', 'cert.pem', 'chain.pem'].map((f) => [f, sha256(path.join(seed, f))]));

      running = startSoul();
      const { soul } = await withLog(waitForStatus(k, sid, 'connected', 30_000), running);
      assert.equal(soul.connected_kid, k.config.kid);
      assert.equal(soul.soulprint.soul_version, V1);
    });

    it('v2 over a running v1: the edited soul.yml is kept byte for byte, the identity untouched, the restarted soul is v2 and reconnects', async () => {
      const upgrade = await install(V2, 'soul');
      assert.doesNotMatch(upgrade, /Configuration file/, 'no conffile prompt: the edit is kept');
      assert.deepEqual(fs.readFileSync(root.path('/etc/soul/soul.yml')), configBytes);
      assert.ok(
        !fs.existsSync(root.path('/etc/soul/soul.yml.dpkg-new')) &&
          !fs.existsSync(root.path('/etc/soul/soul.yml.dpkg-dist')),
      );
      assert.equal((await root.ok(['soul', '--version'])).trim(), V2);
      const seed = root.path('/var/lib/soul/seed');
      for (const [f, h] of Object.entries(seedHashes)) assert.equal(sha256(path.join(seed, f)), h, `${f} is untouched`);

      // postinst's `systemctl try-restart soul`, as systemd does it: SIGTERM, then ExecStart again.
      assert.equal(await running!.stop(), 0, running!.log.out.slice(-2000));
      await waitForStatus(k, sid, 'disconnected', 30_000);
      running = startSoul();
      const { soul } = await withLog(waitForStatus(k, sid, 'connected', 30_000), running);
      assert.equal(soul.soulprint.soul_version, V2);
      assert.equal((await soulStatus(k, sid)).status, 'connected');
    });

    it('remove keeps the conffile, the account and the identity; purge removes them all', async () => {
      await running!.stop();
      running = undefined;
      await root.ok(['dpkg', '--remove', 'soul']);
      assert.ok(
        !fs.existsSync(root.path('/usr/bin/soul')) && !fs.existsSync(root.path('/usr/lib/soul')),
        'the program is gone',
      );
      assert.deepEqual(fs.readFileSync(root.path('/etc/soul/soul.yml')), configBytes);
      assert.ok(fs.existsSync(root.path('/var/lib/soul/seed/key.pem')));
      await root.ok(['getent', 'passwd', 'soul']);

      // As `systemctl enable soul` left it: purge removes the link, so a reinstall starts disabled.
      fs.mkdirSync(root.path('/etc/systemd/system/multi-user.target.wants'), { recursive: true });
      fs.symlinkSync(
        '/lib/systemd/system/soul.service',
        root.path('/etc/systemd/system/multi-user.target.wants/soul.service'),
      );
      const purge = await root.run(['dpkg', '--purge', 'soul']);
      assert.equal(purge.code, 0, purge.stderr);
      assert.doesNotMatch(purge.stdout + purge.stderr, /deluser|crontab/, 'no deluser noise');
      assert.ok(
        !fs.lstatSync(root.path('/etc/systemd/system/multi-user.target.wants/soul.service'), { throwIfNoEntry: false }),
        'the wants link is gone',
      );
      assert.ok(!fs.existsSync(root.path('/etc/soul/soul.yml')), 'the conffile is gone');
      assert.ok(!fs.existsSync(root.path('/var/lib/soul')), 'the state is gone');
      assert.equal((await root.run(['getent', 'passwd', 'soul'])).code, 2, 'the account is gone');
      assert.equal((await root.run(['getent', 'group', 'soul'])).code, 2, 'the group is gone');
      assert.equal((await root.run(['dpkg-query', '-W', 'soul'])).code, 1);
    });
  });

  describe('keeper', () => {
    let files: TestKeeperFiles;
    let running: RootProcess | undefined;
    let configBytes: Buffer;
    // As keeper.service runs it: User=keeper (setpriv execs, as systemd does, no parent process in
    // between), WorkingDirectory and HOME /var/lib/keeper; then its ExecStartPost.
    const startKeeperUnit = () =>
      new RootProcess(
        root.spawn(
          [
            'setpriv',
            '--reuid=keeper',
            '--regid=keeper',
            '--init-groups',
            '--',
            'sh',
            '-c',
            'cd /var/lib/keeper && HOME=/var/lib/keeper exec /usr/bin/keeper run --config=/etc/keeper/keeper.yml',
          ],
          'keeper-host',
        ),
      );
    const waitReady = () =>
      root.run(
        ['/usr/lib/keeper/node/bin/node', '/usr/lib/keeper/bin/wait-ready.js', '/etc/keeper/keeper.yml', '240'],
        { timeoutMs: 260_000 },
      );
    after(async () => {
      await running?.stop();
      if (files) await cleanupKeeperFiles(files);
    });

    it('v1 installs; the edited keeper.yml pointing at the stack passes check-config; keeper init, then keeper run as the unit runs it: ready', async () => {
      await install(V1, 'keeper');
      assert.equal((await root.ok(['keeper', '--version'])).trim(), V1);
      assert.match(
        await root.ok(['dpkg-query', '-W', '-f=${Conffiles}', 'keeper']),
        /^ \/etc\/keeper\/keeper\.yml [0-9a-f]{32}$/m,
      );
      assert.equal(fs.statSync(root.path('/var/lib/keeper')).mode & 0o777, 0o700);
      assert.equal(
        await root.ok(['stat', '-c', '%U:%G %a', '/var/lib/keeper', '/etc/keeper', '/etc/keeper/tls']),
        'keeper:keeper 700\nroot:keeper 750\nroot:keeper 750\n',
      );
      // The shipped default passes the schema, but names files the operator has not installed yet:
      // check-config, the guide's gate before a start, says so (issue 37 row 10).
      const unedited = await root.run(['keeper', 'check-config', '--config=/etc/keeper/keeper.yml']);
      assert.equal(unedited.code, 1, unedited.stdout);
      assert.match(
        unedited.stderr,
        /- secretstore\.auth\.secret_id_file: \/etc\/keeper\/approle-secret-id does not exist; fix: /,
      );

      // The operator's files as docs/install.md installs them: the TLS key readable by the keeper's
      // group, the AppRole secret_ids the keeper's own at 0400 (the spec's mode).
      files = await prepareKeeperConfig();
      const tls = stackFile('tls');
      root.put(path.join(tls, 'keeper.crt'), '/etc/keeper/tls/keeper.crt');
      root.put(path.join(tls, 'ca.pem'), '/etc/keeper/tls/ca.pem');
      root.put(path.join(tls, 'keeper.key'), '/etc/keeper/tls/keeper.key', 0o640);
      root.put(stackFile('approle-secret-id'), '/etc/keeper/approle-secret-id', 0o400);
      root.put(stackFile('approle-scenario-secret-id'), '/etc/keeper/approle-scenario-secret-id', 0o400);
      await root.ok(['chown', 'root:keeper', '/etc/keeper/tls/keeper.key']);
      // Against a stack whose Temporal runs behind mutual TLS (`make demo` leaves it so), the keeper
      // needs the stack's Temporal CA and client certificate too, installed as docs/install.md says:
      // the paths of the checkout's .stack/ do not exist inside the root (check-config refused them).
      const temporalTls = stackTemporalTlsConfig();
      if (temporalTls) {
        root.put(temporalTls.ca, '/etc/keeper/tls/temporal-ca.pem');
        root.put(temporalTls.cert, '/etc/keeper/tls/temporal-client.crt');
        root.put(temporalTls.key, '/etc/keeper/tls/temporal-client.key', 0o640);
        await root.ok(['chown', 'root:keeper', '/etc/keeper/tls/temporal-client.key']);
      }
      await root.ok([
        'chown',
        'keeper:keeper',
        '/etc/keeper/approle-secret-id',
        '/etc/keeper/approle-scenario-secret-id',
      ]);
      const doc = files.doc;
      doc.listen.grpc.bootstrap.tls = { cert: 'tls/keeper.crt', key: 'tls/keeper.key' };
      doc.listen.grpc.event_stream.tls = { cert: 'tls/keeper.crt', key: 'tls/keeper.key', ca: 'tls/ca.pem' };
      doc.secretstore.auth.secret_id_file = 'approle-secret-id';
      doc.secretstore.scenario_auth.secret_id_file = 'approle-scenario-secret-id';
      doc.services.cache_dir = '/var/lib/keeper/services';
      if (temporalTls)
        doc.temporal.tls = {
          ca: 'tls/temporal-ca.pem',
          cert: 'tls/temporal-client.crt',
          key: 'tls/temporal-client.key',
          server_name: temporalTls.server_name,
        };
      fs.writeFileSync(root.path('/etc/keeper/keeper.yml'), `# edited by the operator\n${yaml.dump(doc)}`);
      configBytes = fs.readFileSync(root.path('/etc/keeper/keeper.yml'));
      assert.equal(
        (
          await root.ok(['runuser', '-u', 'keeper', '--', 'keeper', 'check-config', '--config=/etc/keeper/keeper.yml'])
        ).trim(),
        '/etc/keeper/keeper.yml: valid',
      );

      const init = await root.run([
        'runuser',
        '-u',
        'keeper',
        '--',
        'keeper',
        'init',
        '--archon=admin',
        '--config=/etc/keeper/keeper.yml',
        '--credential-out=/var/lib/keeper/admin.jwt',
      ]);
      assert.equal(init.code, 0, init.stderr);
      assert.match(init.stdout, /^created operator admin \(role cluster-admin\)/);

      running = startKeeperUnit();
      const ready = await waitReady();
      assert.equal(ready.code, 0, `${ready.stderr}\n--- keeper log ---\n${running.log.out.slice(-3000)}`);
      const token = fs.readFileSync(root.path('/var/lib/keeper/admin.jwt'), 'utf8').trim();
      const res = await fetch(`http://${doc.listen.openapi.addr}/v1/souls`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      assert.equal(res.status, 200);
    });

    it('v2: keeper.yml kept byte for byte, check-config passes, the restarted keeper is v2 and ready', async () => {
      const upgrade = await install(V2, 'keeper');
      assert.doesNotMatch(upgrade, /Configuration file/);
      assert.deepEqual(fs.readFileSync(root.path('/etc/keeper/keeper.yml')), configBytes);
      assert.equal((await root.ok(['keeper', '--version'])).trim(), V2);
      // v1 still runs and holds the kid: the full check says so, the files alone pass.
      const held = await root.run([
        'runuser',
        '-u',
        'keeper',
        '--',
        'keeper',
        'check-config',
        '--config=/etc/keeper/keeper.yml',
      ]);
      assert.equal(held.code, 1, held.stdout);
      assert.match(held.stderr, new RegExp(`- kid: a live keeper already holds kid ${files.doc.kid} `));
      await root.ok([
        'runuser',
        '-u',
        'keeper',
        '--',
        'keeper',
        'check-config',
        '--offline',
        '--config=/etc/keeper/keeper.yml',
      ]);

      assert.equal(await running!.stop(), 0, running!.log.out.slice(-2000));
      running = startKeeperUnit();
      const ready = await waitReady();
      assert.equal(ready.code, 0, `${ready.stderr}\n--- keeper log ---\n${running.log.out.slice(-3000)}`);
      const metrics = await (await fetch(`http://${files.doc.listen.metrics.addr}/metrics`)).text();
      assert.match(metrics, new RegExp(`version="${V2.replace(/[.+]/g, '\\$&')}"`));
    });

    it('purge removes the program, the conffile, the account, /var/lib/keeper, the secrets and the wants link; nothing is left to the old uid or gid', async () => {
      await running!.stop();
      running = undefined;
      const ids = (await root.ok(['sh', '-c', 'id -u keeper; getent group keeper | cut -d: -f3']))
        .trim()
        .split('\n')
        .map(Number);
      // What an operator leaves: an enabled unit and a file of their own the keeper's group could read.
      fs.mkdirSync(root.path('/etc/systemd/system/multi-user.target.wants'), { recursive: true });
      fs.symlinkSync(
        '/lib/systemd/system/keeper.service',
        root.path('/etc/systemd/system/multi-user.target.wants/keeper.service'),
      );
      root.put(stackFile('tls', 'ca.pem'), '/etc/keeper/notes.txt', 0o640);
      await root.ok(['chown', 'root:keeper', '/etc/keeper/notes.txt']);
      const purge = await root.run(['dpkg', '--purge', 'keeper']);
      assert.equal(purge.code, 0, purge.stderr);
      assert.doesNotMatch(purge.stdout + purge.stderr, /deluser|crontab/, 'no deluser noise');
      for (const p of [
        '/usr/bin/keeper',
        '/usr/bin/keeperctl',
        '/usr/lib/keeper',
        '/etc/keeper/keeper.yml',
        '/var/lib/keeper',
        '/lib/systemd/system/keeper.service',
        '/etc/keeper/approle-secret-id',
        '/etc/keeper/approle-scenario-secret-id',
        '/etc/keeper/tls/keeper.key',
      ]) {
        assert.ok(!fs.existsSync(root.path(p)), `${p} is gone`);
      }
      assert.ok(
        !fs.lstatSync(root.path('/etc/systemd/system/multi-user.target.wants/keeper.service'), {
          throwIfNoEntry: false,
        }),
        'the wants link is gone',
      );
      assert.equal((await root.run(['getent', 'passwd', 'keeper'])).code, 2);
      // A new system account given the keeper's old uid and gid reads nothing the keeper had.
      const left = await root.ok([
        'find',
        '/etc',
        '/var',
        '(',
        '-uid',
        String(ids[0]),
        '-o',
        '-gid',
        String(ids[1]),
        ')',
        '-print',
      ]);
      assert.equal(left, '', "no file is owned by the deleted account's uid or gid");
      assert.equal(
        await root.ok(['stat', '-c', '%U:%G %a', '/etc/keeper/notes.txt']),
        'root:root 640\n',
        "the operator's file stays, root's",
      );
    });
  });

  describe('soul-lint', () => {
    it('installs and checks a service repository offline, exit 1 on a broken one', async () => {
      await install(V1, 'soul-lint');
      fs.cpSync(path.join(repoRoot(), 'test', 'fixtures', 'services', 'motd'), root.path('/srv/motd'), {
        recursive: true,
      });
      fs.cpSync(path.join(repoRoot(), 'test', 'fixtures', 'services', 'broken-scenario'), root.path('/srv/broken'), {
        recursive: true,
      });
      const good = await root.run(['soul-lint', '/srv/motd']);
      assert.equal(good.code, 0, good.stdout + good.stderr);
      const bad = await root.run(['soul-lint', '/srv/broken', '--format', 'json']);
      assert.equal(bad.code, 1, bad.stdout + bad.stderr);
      assert.ok(JSON.parse(bad.stdout).findings.length > 0);
    });
  });
});
