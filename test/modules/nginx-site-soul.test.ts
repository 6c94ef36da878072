// examples/nginx-site through the whole product: a real keeper (test/support: its own database and
// Temporal queue on the shared stack) loads the example from a git repository, renders it and
// dispatches its steps over the event stream to a real soul inside the Debian 12 root with systemd as
// PID 1 (systemd-root.ts). The soul is the one operators install: the .deb scripts/package.sh builds
// from this checkout's dist/, installed with dpkg in a root that mounts neither the checkout nor the
// machine's node, onboarded with `soul init` and started as its own unit (soul.service, with its
// sandboxing) by `systemctl enable --now soul`, as docs/install.md says. nginx-site.test.ts holds the
// same example's finer checks (a refused config, the plan of one change) on the soul's step handler.
//
// The upstreams are HTTP servers of this test process (nginx-probe.ts); requests to nginx are made
// from inside the root. The db password is a canary in the secrets store, given as a
// `secretstore:` reference: it must reach the env file on the host and nothing the keeper or the soul
// shows or logs (plans, diffs, run reports, the keeper's log at debug, the root's whole journal).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { createLogger } from '../../common/logger';
import { repoRoot } from '../support/repo';
import { stackFile } from '../support/stack-env';
import { deleteSecret, putSecret } from '../support/secretstore';
import { builtPackages } from '../packages/built';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { api, endpointOf, uniqueSid, waitFor, waitForStatus } from '../agents/harness';
import { gitRepoFrom, settled, tempDir } from '../runs/keeper';
import { SystemdRoot } from './systemd-root';
import {
  answers as answersIn,
  assertSiteGone,
  DESTROY_CHANGES,
  freePort,
  nginxPids,
  reloads as reloadsIn,
  statusOf,
  upstreams,
  withoutDefaultSite,
} from './nginx-probe';

describe('examples/nginx-site applied by a real keeper and a real soul in a Debian 12 root with systemd', function () {
  this.timeout(900_000);
  let k: TestKeeper;
  let root: SystemdRoot;
  let tmp: string;
  const sid = uniqueSid('nginx');
  let ups: Awaited<ReturnType<typeof upstreams>>;
  let ports: number[] = [];
  let listen = 0;
  const secretName = `keeper/services/nginx-site/${sid}/db`;
  const canaries = [`canary-db-${randomBytes(12).toString('hex')}`, `canary-db-${randomBytes(12).toString('hex')}`];
  const keeperLog: string[] = [];
  /** Every answer of the keeper's API this test read, to search for the canaries at the end. */
  const seen: string[] = [];
  const noCanary = (where: string, text: string) => {
    for (const c of canaries) assert.ok(!text.includes(c), `the db password leaked into ${where}`);
  };

  before(async () => {
    await putSecret('secret', secretName, { password: canaries[0]! });
    ups = await upstreams(['a', 'b', 'c']);
    ports = ups.ports;
    listen = await freePort();
    tmp = tempDir('nginx-site-soul-');
    // The release's contents in a gzip -1 archive, built once per test run (shared with the package suites).
    const { soul: debFile } = await builtPackages(['soul']);
    const deb = path.basename(debFile);
    const url = gitRepoFrom(path.join(repoRoot(), 'examples', 'nginx-site'), path.join(tmp, 'nginx-site.git'), 'v1');
    k = await startTestKeeper({
      mutate: (doc) => {
        doc.logging.level = 'debug';
      },
      log: createLogger({ level: 'debug', write: (l) => keeperLog.push(l) }),
    });
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'nginx-site', git: url, ref: 'v1' })).status, 201);
    const reg = await api(k, 'POST', '/v1/souls', { sid, transport: 'agent', covens: ['web'] });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));

    root = await SystemdRoot.boot(
      sid,
      (dir) => {
        withoutDefaultSite(dir);
        // The SID is the host's FQDN: systemd sets the name from /etc/hostname at boot.
        fs.writeFileSync(path.join(dir, 'etc', 'hostname'), `${sid}\n`);
        fs.appendFileSync(path.join(dir, 'etc', 'hosts'), `127.0.1.1\t${sid}\n`);
        // Not /tmp: systemd mounts a tmpfs over it at boot.
        fs.copyFileSync(debFile, path.join(dir, 'root', deb));
      },
      { checkout: false },
    );
    await root.ok(['dpkg', '-i', `/root/${deb}`]);
    // The operator's edit of the packaged conffile: this host's SID, the test keeper and its CA.
    fs.copyFileSync(stackFile('tls', 'ca.pem'), root.path('/etc/soul/keeper-ca.pem'));
    const conf = yaml.load(fs.readFileSync(root.path('/etc/soul/soul.yml'), 'utf8')) as Record<string, any>;
    conf.sid = sid;
    conf.keeper.endpoints = [endpointOf(k)];
    fs.writeFileSync(root.path('/etc/soul/soul.yml'), yaml.dump(conf));
    // The bootstrap token on stdin: never in an argv an error message would print.
    await root.ok(['soul', 'init', '--config=/etc/soul/soul.yml'], { input: `${reg.body.bootstrap_token}\n` });
    await root.ok(['systemctl', 'enable', '--now', 'soul']);
    const { soul } = await waitForStatus(k, sid, 'connected', 60_000);
    // The packaged unit runs the packaged program (the root holds no checkout); the version is the package's.
    assert.equal(soul.soulprint.soul_version, (await root.ok(['dpkg-query', '-W', '-f=${Version}', 'soul'])).trim());
    const unit = await root.ok(['systemctl', 'show', '--property=FragmentPath,ActiveState', 'soul']);
    assert.match(unit, /^ActiveState=active$/m);
    assert.match(unit, /^FragmentPath=(\/usr)?\/lib\/systemd\/system\/soul\.service$/m, 'the unit dpkg installed');
    assert.ok(!fs.existsSync(root.path('/opt/keeper')) && !fs.existsSync(root.path('/usr/local/bin/node')));
  });
  let failed = false;
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });
  after(async () => {
    // The soul's own log, to read next to a failure.
    if (root && failed)
      process.stdout.write(
        (await root.run(['journalctl', '-q', '-o', 'cat', '-u', 'soul', '-n', '30'])).stdout.replace(
          /^/gm,
          '      soul: ',
        ),
      );
    await root?.stop();
    await k?.stop();
    ups?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    await deleteSecret('secret', secretName).catch(() => undefined);
  });

  // The db access list lets the root's own requests (127.0.0.1) reach /db/.
  const input = (list: number[]) => ({
    listen,
    upstreams: list.map((port) => ({ host: '127.0.0.1', port })),
    db_password: `secretstore:secret/${secretName}#password`,
    db_access: ['127.0.0.1'],
  });
  /** Each step of a run on the host: name and status ("changed", "ok", "skipped"). */
  async function report(applyId: string): Promise<Array<[string, string]>> {
    const r = await waitFor(
      `run ${applyId} to finish`,
      async () => {
        const got = (await api(k, 'GET', `/v1/incarnations/web/runs/${applyId}`)).body;
        seen.push(JSON.stringify(got));
        return got && got.status !== 'running' && got.status !== 'pending' ? got : undefined;
      },
      120_000,
      200,
    );
    return r.hosts[0].steps.map((s: any) => [s.name, s.status]);
  }
  async function run(ups: number[]): Promise<Array<[string, string]>> {
    const r = await api(k, 'POST', '/v1/incarnations/web/runs', { operation: 'create', input: input(ups) });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settled(k, 'web', 120_000)).status, 'ready');
    return report(r.body.apply_id);
  }
  // The root has no node of its own: the soul package's runtime makes the requests.
  const NODE = '/usr/lib/soul/node/bin/node';
  const answers = () => answersIn(root, listen, NODE);
  const reloads = () => reloadsIn(root);
  const settledPids = (notOf: number[] = []) => nginxPids(root, notOf);
  const site = () => fs.readFileSync(root.path('/etc/nginx/sites-available/app'), 'utf8');
  const dbEnv = () => fs.readFileSync(root.path('/etc/nginx-site/app/db.env'), 'utf8');
  /** A plan of the create operation with this input, once ready. */
  async function planned(ups: number[]): Promise<any> {
    const p = await api(k, 'POST', '/v1/incarnations/web/plans', { operation: 'create', input: input(ups) });
    assert.equal(p.status, 202, JSON.stringify(p.body));
    const got = (await api(k, 'GET', `${p.body.plan}?wait=60s`)).body;
    seen.push(JSON.stringify(got));
    assert.equal(got.status, 'ready', JSON.stringify(got));
    return got;
  }
  const changed = (steps: Array<[string, string]>) => steps.filter(([, s]) => s === 'changed').map(([n]) => n);

  it('create: the soul installs the site; nginx answers on the configured port through both upstreams', async () => {
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'web',
      service: 'nginx-site',
      covens: ['web'],
      input: input([ports[0]!, ports[1]!]),
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settled(k, 'web', 120_000)).status, 'ready');
    assert.deepEqual(changed(await report(r.body.apply_id)), [
      'site user',
      'web root',
      'log folder',
      'log rotation',
      'db env',
      'site checker',
      'site config',
      'site enabled',
      'nginx reloaded',
    ]);
    assert.match(site(), new RegExp(`server 127\\.0\\.0\\.1:${ports[0]};\\n\\s*server 127\\.0\\.0\\.1:${ports[1]};`));
    assert.equal(fs.readlinkSync(root.path('/etc/nginx/sites-enabled/app')), '/etc/nginx/sites-available/app');
    assert.deepEqual(await answers(), ['upstream a', 'upstream b']);
    // The db access list names 127.0.0.1: the root's requests reach /db/.
    assert.equal(await statusOf(root, listen, '/db/', NODE), 200);
    // The password from the store, in a file only root and the site's group read.
    assert.match(dbEnv(), new RegExp(`^DB_PASSWORD=${canaries[0]}$`, 'm'));
    const env = fs.statSync(root.path('/etc/nginx-site/app/db.env'));
    const gid = Number((await root.ok(['getent', 'group', 'nginx-site'])).split(':')[2]);
    assert.deepEqual([env.mode & 0o777, env.uid, env.gid], [0o640, 0, gid]);
    assert.ok(fs.existsSync(root.path('/etc/logrotate.d/nginx-site-app')));
  });

  it('one upstream changed: the plan names the file and the reload, the run reloads exactly once (same master, new workers); the same input again: no reload', async () => {
    const before = await settledPids();
    const reloaded = await reloads();
    const plan = await planned([ports[0]!, ports[2]!]);
    assert.deepEqual(
      plan.hosts[0].steps.filter((s: any) => s.would_change).map((s: any) => s.name),
      ['site config', 'nginx reloaded'],
    );
    assert.match(
      plan.hosts[0].steps.find((s: any) => s.name === 'site config').diff.content.unified,
      new RegExp(`-\\s*server 127\\.0\\.0\\.1:${ports[1]};\\n\\+\\s*server 127\\.0\\.0\\.1:${ports[2]};`),
    );
    assert.deepEqual(await settledPids(), before, 'a plan reloads nothing');
    assert.deepEqual(changed(await run([ports[0]!, ports[2]!])), ['site config', 'nginx reloaded']);
    const after = await settledPids(before.others);
    assert.equal(after.main, before.main);
    assert.ok(
      after.others.length > 0 && after.others.every((w) => !before.others.includes(w)),
      JSON.stringify({ before, after }),
    );
    assert.equal(await reloads(), reloaded + 1);
    assert.deepEqual(await answers(), ['upstream a', 'upstream c']);

    const again = await run([ports[0]!, ports[2]!]);
    assert.deepEqual(changed(again), []);
    assert.deepEqual(again.at(-1), ['nginx reloaded', 'skipped']);
    assert.deepEqual(await settledPids(), after);
    assert.equal(await reloads(), reloaded + 1);
  });

  it('the db password rotated in the store: the plan says "secret content changed" for the db env alone, the run writes it, nginx is not reloaded', async () => {
    await putSecret('secret', secretName, { password: canaries[1]! });
    const before = await settledPids();
    const reloaded = await reloads();
    const plan = await planned([ports[0]!, ports[2]!]);
    const steps = plan.hosts[0].steps;
    assert.deepEqual(
      steps.filter((s: any) => s.would_change).map((s: any) => s.name),
      ['db env'],
    );
    const content = steps.find((s: any) => s.name === 'db env').diff.content;
    assert.equal(content.secret, true, JSON.stringify(content));
    assert.equal(content.note, 'secret content changed');
    assert.equal(content.unified, undefined);
    assert.match(dbEnv(), new RegExp(`^DB_PASSWORD=${canaries[0]}$`, 'm'), 'a plan writes nothing');

    assert.deepEqual(changed(await run([ports[0]!, ports[2]!])), ['db env']);
    assert.match(dbEnv(), new RegExp(`^DB_PASSWORD=${canaries[1]}$`, 'm'));
    assert.equal(fs.statSync(root.path('/etc/nginx-site/app/db.env')).mode & 0o777, 0o640);
    assert.deepEqual(await settledPids(), before);
    assert.equal(await reloads(), reloaded);
  });

  it('DELETE runs destroy: nginx stopped, the link, config, checker, web root and user gone', async () => {
    const r = await api(k, 'DELETE', '/v1/incarnations/web');
    assert.equal(r.status, 202, JSON.stringify(r.body));
    await waitFor(
      'web to be deleted',
      async () => (await api(k, 'GET', '/v1/incarnations/web')).status === 404,
      120_000,
      200,
    );
    assert.deepEqual(changed(await report(r.body.apply_id)), DESTROY_CHANGES);
    await assertSiteGone(root);
  });

  it('the db password reached the env file and nothing else: not a plan, diff or run report, the keeper log or the root journal', async () => {
    assert.ok(seen.length > 0 && keeperLog.length > 0);
    noCanary('an API answer (plans, diffs, run reports)', seen.join('\n'));
    noCanary("the keeper's log", keeperLog.join('\n'));
    // The soul's log, nginx's, systemd's: everything the root logged.
    noCanary("the root's journal", await root.ok(['journalctl', '-q', '-o', 'cat', '--no-pager']));
  });
});
