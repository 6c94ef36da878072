// examples/nginx-site end to end on a clean Debian 12 root with systemd as PID 1 (systemd-root.ts).
//
// Which path this is: the example is rendered by the real render (scenario/: loaded from its
// directory, its template's range over the upstreams, for the root's host), and each step of the
// host's plan is applied inside the root by the soul's own step handler with its ledger (in-root.ts,
// as core-modules.test.ts does). The keeper's part between steps, deciding `require:` and
// `onchanges:` from the replies, is done here by `applyPlan` (the rule of docs/scenario.md: a step
// runs when every required step succeeded and, with `onchanges:`, one watched step changed). No
// keeper, stream or soul process: nginx-site-soul.test.ts applies the same example with all of them;
// this file adds what is quicker to see step by step (the plan of each step, a refused config).
//
// The upstreams are HTTP servers of this test process (nginx-probe.ts); requests to nginx are made
// from inside the root.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadServiceFromDir, render, type PlanStep } from '../../scenario';
import { repoRoot } from '../support/repo';
import { waitFor } from '../agents/harness';
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

interface Reply {
  changed: boolean;
  ok: boolean;
  output: string;
}
/** A step's outcome in one run: its reply, or why it did not run. */
type Outcome = { name: string; ran: true; reply: Reply } | { name: string; ran: false; why: string };

const HOST = 'nginx-site-root';

describe('examples/nginx-site on a Debian 12 root with systemd as PID 1', function () {
  this.timeout(900_000);
  let root: SystemdRoot;
  let runs = 0;
  let ups: Awaited<ReturnType<typeof upstreams>>;
  let ports: number[] = [];
  let listen = 0;

  const service = loadServiceFromDir(path.join(repoRoot(), 'examples', 'nginx-site'));

  before(async () => {
    assert.deepEqual(service.errors, []);
    ups = await upstreams(['a', 'b', 'c']);
    ports = ups.ports;
    listen = await freePort();
    root = await SystemdRoot.boot(HOST, withoutDefaultSite);
  });
  after(async () => {
    await root?.stop();
    ups?.close();
  });

  function plan(operation: string, input: Record<string, unknown>): PlanStep[] {
    const r = render({
      service,
      operation,
      input,
      state: {},
      hosts: [{ sid: HOST, soulprint: { os_family: 'debian', fqdn: HOST } }],
    });
    assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
    const steps = r.plan.hosts[0]!.steps;
    // The runner below decides require/onchanges only: the example must need nothing else of the keeper.
    for (const s of steps)
      assert.deepEqual(
        [s.skip, s.when, s.changed_when, s.failed_when, s.until],
        [undefined, undefined, undefined, undefined, undefined],
        s.name,
      );
    return steps;
  }

  /** Applies (or plans) a host's steps in order, one at a time, as the keeper dispatches them. */
  async function applyPlan(steps: PlanStep[], dryRun = false): Promise<Outcome[]> {
    const applyId = `nginx-site-${++runs}`;
    const done = new Map<number, Reply>();
    const out: Outcome[] = [];
    for (const s of steps) {
      const failed = (s.require ?? []).filter((i) => !done.get(i)?.ok);
      if (failed.length > 0) {
        out.push({ name: s.name, ran: false, why: `require: ${failed.join(',')}` });
        continue;
      }
      if (s.onchanges && !s.onchanges.some((i) => done.get(i)?.changed)) {
        out.push({ name: s.name, ran: false, why: 'onchanges: nothing changed' });
        continue;
      }
      const input = JSON.stringify({
        applyId,
        dryRun,
        showContent: true,
        steps: [{ module: s.module, params: s.params, index: s.index }],
      });
      const reply = JSON.parse(
        (await root.ok(['node', '/opt/keeper/dist/test/modules/in-root.js'], { input })).trim(),
      ) as Reply;
      assert.ok(reply.ok, `${s.name}: ${reply.output}`);
      done.set(s.index, reply);
      out.push({ name: s.name, ran: true, reply });
    }
    return out;
  }
  const changedNames = (o: Outcome[]) => o.filter((x) => x.ran && x.reply.changed).map((x) => x.name);
  const skippedNames = (o: Outcome[]) => o.filter((x) => !x.ran).map((x) => x.name);

  const answers = () => answersIn(root, listen);
  const reloads = () => reloadsIn(root);
  const settledPids = (notOf: number[] = []) => nginxPids(root, notOf);
  const site = () => fs.readFileSync(root.path('/etc/nginx/sites-available/app'), 'utf8');
  // The plain render (no keeper) takes the secret input as text: the secret path is nginx-site-soul.test.ts's.
  // The db access list names another network: /db/ answers 403 to the requests made inside the root.
  const input = (list: number[]) => ({
    listen,
    upstreams: list.map((port) => ({ host: '127.0.0.1', port })),
    db_password: 'not-a-secret-here',
    db_access: ['10.9.9.0/24'],
  });

  it('create: nginx-light, user, web root, logs and their rotation, the db env, the site from its upstreams checked by nginx -t, the link; nginx answers through both upstreams', async () => {
    const steps = plan('create', input([ports[0]!, ports[1]!]));
    const made = await applyPlan(steps);
    assert.deepEqual(
      changedNames(made),
      [
        'site user',
        'web root',
        'log folder',
        'log rotation',
        'db env',
        'site checker',
        'site config',
        'site enabled',
        'nginx reloaded',
      ],
      JSON.stringify(made),
    );
    assert.match(
      (made[0] as { reply: Reply }).reply.output,
      /nginx-light.*logrotate.*already installed/,
      'the root ships nginx-light and logrotate: no change',
    );
    assert.equal(
      site()
        .match(/^\s*server 127\.0\.0\.1:\d+;$/gm)!
        .join('\n'),
      `    server 127.0.0.1:${ports[0]};\n    server 127.0.0.1:${ports[1]};`,
    );
    assert.match(site(), new RegExp(`^\\s*listen ${listen};$`, 'm'));
    assert.equal(fs.readlinkSync(root.path('/etc/nginx/sites-enabled/app')), '/etc/nginx/sites-available/app');
    assert.match(
      await root.ok(['getent', 'passwd', 'nginx-site']),
      /^nginx-site:x:\d+:\d+::\/srv\/app:\/usr\/sbin\/nologin$/m,
    );
    const uid = Number((await root.ok(['id', '-u', 'nginx-site'])).trim());
    assert.ok(uid < 1000, `a system account: uid ${uid}`);
    assert.equal(fs.statSync(root.path('/srv/app/www')).uid, uid);
    assert.equal((await root.ok(['systemctl', 'is-active', 'nginx'])).trim(), 'active');
    assert.deepEqual(await answers(), ['upstream a', 'upstream b']);

    // The db env: the application's settings, readable by root and the site's group only.
    const env = fs.statSync(root.path('/etc/nginx-site/app/db.env'));
    const gid = Number((await root.ok(['getent', 'group', 'nginx-site'])).split(':')[2]);
    assert.deepEqual([env.mode & 0o777, env.uid, env.gid], [0o640, 0, gid]);
    assert.match(
      fs.readFileSync(root.path('/etc/nginx-site/app/db.env'), 'utf8'),
      /^DB_HOST=127\.0\.0\.1\nDB_NAME=app\nDB_USER=app\nDB_PASSWORD=not-a-secret-here$/m,
    );
    // The db access list: 10.9.9.0/24 only, so a request from inside the root is refused.
    assert.equal(await statusOf(root, listen, '/db/'), 403);
    assert.equal(await statusOf(root, listen, '/'), 200);
  });

  it("the site's logs go to its own folder and logrotate rotates them: nginx writes a new file after", async () => {
    const logs = root.path('/var/log/nginx-site/app');
    assert.match(fs.readFileSync(path.join(logs, 'access.log'), 'utf8'), /"GET \/db\/ HTTP\/1\.1" 403 /);
    // -f: rotate now, whatever the schedule; its own state file, so the root's is left alone.
    await root.ok(['logrotate', '-f', '-s', '/var/lib/logrotate/nginx-site-test', '/etc/logrotate.d/nginx-site-app']);
    assert.match(fs.readFileSync(path.join(logs, 'access.log.1'), 'utf8'), /"GET \/db\/ HTTP\/1\.1" 403 /);
    // nginx reopens its files on USR1 (the snippet's postrotate): the master first, then each worker, so
    // requests are made until one is logged in the new access.log rather than the rotated one.
    const access = path.join(logs, 'access.log');
    await waitFor(
      'a request after the rotation logged in a new access.log',
      async () => {
        assert.equal(await statusOf(root, listen, '/rotated'), 200);
        return fs.existsSync(access) && /"GET \/rotated HTTP\/1\.1" 200 /.test(fs.readFileSync(access, 'utf8'));
      },
      30_000,
      500,
    );
    assert.doesNotMatch(fs.readFileSync(access, 'utf8'), /GET \/db\//, 'the new file starts after the rotation');
  });

  it('a refused configuration (nginx -t fails) leaves the live file and nginx as they were', async () => {
    const before = await settledPids();
    const steps = plan('create', { ...input([ports[0]!]), server_name: 'bad;name' });
    const r = await applyPlan(steps).catch((e: Error) => e);
    assert.ok(r instanceof Error);
    assert.match(
      r.message,
      /^site config: .*validate: \/usr\/local\/lib\/nginx-site\/check-site refused the new content .*unknown directive "name"/s,
    );
    assert.match(site(), new RegExp(`server 127\\.0\\.0\\.1:${ports[1]};`));
    assert.deepEqual(await settledPids(), before);
  });

  it('one upstream changed: the plan names the file and the reload; the apply reloads once (same master, new workers)', async () => {
    const steps = plan('create', input([ports[0]!, ports[2]!]));
    const before = await settledPids();
    const reloaded = await reloads();
    const predicted = await applyPlan(steps, true);
    assert.deepEqual(changedNames(predicted), ['site config', 'nginx reloaded']);
    assert.equal(
      (predicted.find((o) => o.name === 'nginx reloaded') as { reply: Reply }).reply.output,
      'would reload nginx (dry run)',
    );
    assert.deepEqual(await settledPids(), before, 'a plan reloads nothing');
    const done = await applyPlan(steps);
    assert.deepEqual(changedNames(done), ['site config', 'nginx reloaded']);
    assert.deepEqual(skippedNames(done), []);
    const after = await settledPids(before.others);
    assert.equal(after.main, before.main, 'reload keeps the master');
    assert.ok(
      after.others.length > 0 && after.others.every((w) => !before.others.includes(w)),
      JSON.stringify({ before, after }),
    );
    assert.equal(await reloads(), reloaded + 1, 'exactly one reload');
    assert.doesNotMatch(site(), new RegExp(`:${ports[1]};`));
    assert.deepEqual(await answers(), ['upstream a', 'upstream c']);
  });

  it('the same input again is a no-op: nothing changed, no reload, the same workers', async () => {
    const before = await settledPids();
    const reloaded = await reloads();
    const again = await applyPlan(plan('create', input([ports[0]!, ports[2]!])));
    assert.deepEqual(changedNames(again), []);
    assert.deepEqual(skippedNames(again), ['nginx reloaded']);
    assert.deepEqual(await settledPids(), before);
    assert.equal(await reloads(), reloaded);
  });

  it('destroy: nginx stopped and disabled, the link, config, checker, web root and user gone; a second destroy is a no-op', async () => {
    const gone = await applyPlan(plan('destroy', {}));
    assert.deepEqual(changedNames(gone), DESTROY_CHANGES);
    await assertSiteGone(root);
    assert.equal((await root.run(['systemctl', 'is-enabled', 'nginx'])).stdout.trim(), 'disabled');
    assert.equal((await root.run(['getent', 'group', 'nginx-site'])).code, 2);
    assert.deepEqual(changedNames(await applyPlan(plan('destroy', {}))), []);
  });
});
