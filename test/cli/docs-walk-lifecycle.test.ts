// The keeperctl examples of docs/plans.md, docs/versions.md and docs/drift.md, run with keeperctl
// alone (issue 31, "keeperctl covers every documented step"). Every `keeperctl` command those docs
// show (in a ```sh block, or as inline code in the prose and tables) is read from the docs, and the
// walk below runs each one, as written, by the real program against a real keeper with one real
// soul, in the order a new operator would need them. A doc command the walk does not run fails it,
// so a new example cannot go untried; a step naming a command the doc no longer has fails too.
// What the walk adds, and only that:
// - the docs' placeholders (NAME, REF, PLAN_ID, `<plan_id>`, the elided `shop.update.plan.mi3x…`)
//   become this walk's values; the docs' own names (shop, web, nginx, edge, port=8080) are used as they are;
// - `--yes` on a command that asks (the docs: "asks; --yes in scripts"): standard input is no terminal here;
// - `--input root=DIR` on a create: where the service writes on the host, which the docs' examples
//   leave to the service (fixture test/fixtures/services/docs-shop, registered as `nginx`).
// Between doc steps the walk also uses keeperctl itself (login, a 2s drift interval) and edits the
// host's file by hand to make drift, as an operator would.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { serviceRepo, type ServiceRepo } from '../support/service-repo';
import { waitFor } from '../agents/harness';
import { startRunKeeper, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import { docCommands, words } from './doc-commands';
import { runKeeperctl, type Result } from '../support/keeperctl-process';

const DOCS = ['plans', 'versions', 'drift'] as const;
type Doc = (typeof DOCS)[number];

describe('docs/plans.md, versions.md and drift.md, walked with keeperctl alone', function () {
  this.timeout(600_000);
  let k: TestKeeper;
  let root: string;
  let out: string;
  let repo: ServiceRepo;
  let souls: TestSoul[] = [];
  const inDocs = new Map<Doc, string[]>();
  const walked = new Map<Doc, Set<string>>(DOCS.map((d) => [d, new Set<string>()]));

  before(async () => {
    for (const d of DOCS) inDocs.set(d, docCommands(fs.readFileSync(path.join(repoRoot(), 'docs', `${d}.md`), 'utf8')));
    root = tempDir('docs-walk-lc-');
    out = path.join(root, 'out');
    fs.mkdirSync(path.join(root, 'home'));
    repo = serviceRepo({ fixture: 'docs-shop', tags: ['v1'] });
    // v2: a migration adds `listen` (docs/versions.md's example line), and the config gets a new header.
    repo.commit({
      'service.yml': 'name: nginx\nstate_schema_version: 2\n',
      'migrations/2.yml':
        'description: Version 2 listens on all addresses.\nstate_changes:\n  sets:\n    listen: "0.0.0.0:80"\n',
      ...Object.fromEntries(
        ['create', 'update'].map((op) => {
          const file = `scenario/${op}/main.yml`;
          const text = fs.readFileSync(path.join(repo.dir, file), 'utf8');
          return [file, text.replace('# managed by keeper\\n', '# managed by keeper (v2)\\n')];
        }),
      ),
    });
    repo.tag('v2');
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['edge']]);
    fs.writeFileSync(path.join(root, 'admin.jwt'), k.adminToken, { mode: 0o600 });
  });
  after(async () => {
    await Promise.all(souls.map((s) => s.run.kill()));
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const ctl = (args: string[]) =>
    runKeeperctl(args, {
      PATH: process.env['PATH'],
      HOME: path.join(root, 'home'),
      XDG_CONFIG_HOME: path.join(root, 'config'),
    });

  /**
   * Runs the doc's command `cmd` (it must be one of the doc's), its words in `vars` replaced, `extra`
   * appended; asserts the exit code (0 unless `code`) and returns what it printed.
   */
  async function step(
    doc: Doc | null,
    cmd: string,
    opts: { vars?: Record<string, string>; extra?: string[]; code?: number } = {},
  ): Promise<Result> {
    if (doc) {
      assert.ok(
        inDocs.get(doc)!.includes(cmd),
        `docs/${doc}.md no longer shows \`${cmd}\`: update the walk (test/cli/docs-walk-lifecycle.test.ts)`,
      );
      walked.get(doc)!.add(cmd);
    }
    const args = [
      ...words(cmd)
        .slice(1)
        .map((w) => opts.vars?.[w] ?? w),
      ...(opts.extra ?? []),
    ];
    const r = await ctl(args);
    const want = opts.code ?? 0;
    assert.equal(r.code, want, `keeperctl ${args.join(' ')}\nexit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r;
  }
  const yes = ['--yes'];
  const rootInput = () => ['--input', `root=${out}`];
  const planIdOf = (r: Result) => {
    const id = /apply-plan \S+ (\S+)/.exec(r.stdout)?.[1];
    assert.ok(id, `the plan printed no apply-plan command:\n${r.stdout}`);
    return id;
  };
  const appConf = () => {
    const hosts = fs.readdirSync(out);
    assert.equal(hosts.length, 1, `one host directory under ${out}: ${hosts.join(', ')}`);
    return path.join(out, hosts[0], 'app.conf');
  };
  // What the docs say happened, read from the API (the walk's commands themselves are keeperctl's).
  const api = async (p: string) => {
    const res = await fetch(`${k.baseUrl}${p}`, { headers: { Authorization: `Bearer ${k.adminToken}` } });
    assert.equal(res.status, 200, `GET ${p}: ${res.status}`);
    return (await res.json()) as any;
  };

  it('runs every keeperctl example of the three docs, each doing what its doc says', async () => {
    await step(null, `keeperctl login demo --url ${k.baseUrl} --token-file ${path.join(root, 'admin.jwt')}`);

    // docs/versions.md "Publishing": register, publish v2, list, read one.
    const svc = { NAME: 'nginx', URL: repo.url, REF: 'v1' };
    await step('versions', 'keeperctl services add NAME --git URL --ref REF', { vars: svc });
    await step('versions', 'keeperctl services publish NAME REF', { vars: { ...svc, REF: 'v2' } });
    const versions = await step('versions', 'keeperctl services versions NAME', { vars: svc });
    assert.match(versions.stdout, /v2[\s\S]*v1/, 'newest first');
    const one = await step('versions', 'keeperctl services version NAME REF', { vars: svc });
    assert.match(one.stdout, /update/);
    assert.match(one.stdout, /port/);

    // docs/versions.md "Incarnations and versions": shop at v1, offered v2.
    await step('versions', 'keeperctl incarnations create NAME --service S --coven C --version V', {
      vars: { NAME: 'shop', S: 'nginx', C: 'edge', V: 'v1' },
      extra: rootInput(),
    });
    assert.match(fs.readFileSync(appConf(), 'utf8'), /^# managed by keeper\nport=80\n$/);
    const list = await step('versions', 'keeperctl incarnations list');
    assert.match(list.stdout, /VERSION[\s\S]*NEWER/, list.stdout);
    assert.match(list.stdout, /shop\b.*\bv1\b.*\bv2\b/, list.stdout);
    const get = await step('versions', 'keeperctl incarnations get', { extra: ['shop'] });
    assert.match(get.stdout, /keeperctl incarnations upgrade shop --version v2/, get.stdout);

    // docs/plans.md: plan, apply exactly that, list, the three in one.
    const planned = await step('plans', 'keeperctl incarnations plan shop update --input port=8080');
    assert.match(planned.stdout, /port=8080/, planned.stdout);
    assert.match(fs.readFileSync(appConf(), 'utf8'), /port=80\n/, 'a plan changes nothing');
    const planId = planIdOf(planned);
    await step('plans', 'keeperctl incarnations apply-plan shop shop.update.plan.mi3x…', {
      vars: { 'shop.update.plan.mi3x…': planId },
      extra: yes,
    });
    assert.match(fs.readFileSync(appConf(), 'utf8'), /port=8080\n/);
    const plans = await step('plans', 'keeperctl incarnations plans shop');
    assert.ok(plans.stdout.includes(planId), plans.stdout);
    await step('plans', 'keeperctl run shop update --input port=8080 --plan', { extra: yes });
    await step('plans', 'keeperctl run NAME OPERATION --plan', {
      vars: { NAME: 'shop', OPERATION: 'update' },
      extra: [...yes, '--input', 'port=8081'],
    });
    assert.match(fs.readFileSync(appConf(), 'utf8'), /port=8081\n/);

    // docs/plans.md "Apply exactly the plan": a host changed after the plan is refused, the run locks,
    // and only --force-render retries it.
    const stale = planIdOf(await step('plans', 'keeperctl incarnations plan shop update --input port=8080'));
    fs.writeFileSync(appConf(), '# edited by hand\n');
    const refused = await step(null, `keeperctl incarnations apply-plan shop ${stale} --yes`, { code: 1 });
    assert.match(refused.stdout + refused.stderr, /drift since plan/, refused.stdout + refused.stderr);
    assert.match(refused.stdout + refused.stderr, /keeperctl run shop update --plan/, 'offers the plan command');
    assert.equal(fs.readFileSync(appConf(), 'utf8'), '# edited by hand\n', 'nothing applied on the host');
    await step(null, 'keeperctl incarnations unlock shop --retry', { code: 5 });
    await step('plans', 'keeperctl incarnations unlock NAME --retry --force-render', { vars: { NAME: 'shop' } });
    assert.match(fs.readFileSync(appConf(), 'utf8'), /port=8080\n/);

    // docs/plans.md "The plan of a create": web does not exist until its plan is applied.
    const webPlan = await step(
      'plans',
      'keeperctl incarnations plan web create --service nginx --coven edge --input port=8080',
      { extra: rootInput() },
    );
    assert.equal((await ctl(['incarnations', 'get', 'web'])).code, 4, 'planning a create records no incarnation');
    await step('plans', 'keeperctl incarnations apply-plan web <plan_id>', {
      vars: { '<plan_id>': planIdOf(webPlan) },
      extra: yes,
    });
    assert.equal((await api('/v1/incarnations/web')).status, 'ready');

    // docs/drift.md: set, read, make a host drift, read the check's plan, apply it, stop.
    const every = await step('drift', 'keeperctl incarnations drift shop --interval 10m');
    assert.match(every.stdout, /10m/, every.stdout);
    await step('drift', 'keeperctl incarnations drift shop --interval 10m --auto-repair');
    const driftGet = await step('drift', 'keeperctl incarnations get shop');
    assert.match(driftGet.stdout, /drift:\s+every 10m, auto repair: unchecked/, driftGet.stdout);
    const driftList = await step('drift', 'keeperctl incarnations list');
    assert.match(driftList.stdout, /DRIFT[\s\S]*shop\b.*\bunchecked\b/, driftList.stdout);
    await step(null, 'keeperctl incarnations drift shop --interval 2s');
    fs.writeFileSync(appConf(), '# edited by hand again\n');
    const driftPlan = await waitFor(
      'a drift check to find the hand edit',
      async () => {
        const d = (await api('/v1/incarnations/shop')).drift;
        return d.status === 'drifted' ? (d.plan_id as string) : undefined;
      },
      120_000,
      500,
    );
    await step(null, 'keeperctl incarnations drift shop --off');
    const report = await step('drift', 'keeperctl incarnations plan-report NAME PLAN_ID', {
      vars: { NAME: 'shop', PLAN_ID: driftPlan },
    });
    assert.match(report.stdout, /edited by hand again/, report.stdout);
    const inSyncBefore = (await api('/v1/incarnations/shop')).drift.checks_in_sync as number;
    await step('drift', 'keeperctl incarnations apply-plan NAME PLAN_ID', {
      vars: { NAME: 'shop', PLAN_ID: driftPlan },
      extra: yes,
    });
    assert.match(fs.readFileSync(appConf(), 'utf8'), /^# managed by keeper\nport=8080\n$/);
    // Repaired: the next checks find the host in sync, and `get` counts them.
    await step(null, 'keeperctl incarnations drift shop --interval 2s');
    await waitFor(
      'a drift check in sync after the repair',
      async () => ((await api('/v1/incarnations/shop')).drift.checks_in_sync > inSyncBefore ? true : undefined),
      120_000,
      500,
    );
    const counted = await step('drift', 'keeperctl incarnations get', { extra: ['shop'] });
    assert.match(counted.stdout, /drift_in_sync:\s+\d+ checks?, the last at /, counted.stdout);
    await step('drift', 'keeperctl incarnations drift shop --interval 10m');
    await step('drift', 'keeperctl incarnations drift shop --off');
    assert.equal((await api('/v1/incarnations/shop')).drift.interval, null);

    // docs/versions.md and plans.md: the upgrade's plan, the upgrade, then the operation at v2.
    const upPlan = await step('versions', 'keeperctl incarnations plan NAME upgrade --version v2', {
      vars: { NAME: 'shop' },
    });
    assert.match(upPlan.stdout, /state listen: \(none\) -> "0\.0\.0\.0:80"/, upPlan.stdout);
    assert.match(upPlan.stdout, /keeperctl incarnations upgrade shop --version v2/, upPlan.stdout);
    assert.match(upPlan.stdout, /keeperctl run shop update/, upPlan.stdout);
    assert.doesNotMatch(upPlan.stdout, /can be applied/, upPlan.stdout);
    const upPlanId = /^plan (\S+) of shop \(upgrade\): ready$/m.exec(upPlan.stdout)?.[1];
    assert.ok(upPlanId, upPlan.stdout);
    const notApplied = await step(null, `keeperctl incarnations apply-plan shop ${upPlanId} --yes`, {
      code: 5,
    });
    assert.match(notApplied.stderr + notApplied.stdout, /keeperctl incarnations upgrade shop --version v2/);
    await step('versions', 'keeperctl incarnations upgrade NAME --version v2', { vars: { NAME: 'shop' } });
    assert.match(fs.readFileSync(appConf(), 'utf8'), /^# managed by keeper\n/, 'an upgrade touches no host');
    await step('versions', 'keeperctl run NAME update', { vars: { NAME: 'shop' }, extra: yes });
    assert.match(fs.readFileSync(appConf(), 'utf8'), /^# managed by keeper \(v2\)\nport=8080\n$/);
    await step('versions', 'keeperctl run NAME <operation>', {
      vars: { NAME: 'web', '<operation>': 'update' },
      extra: yes,
    });

    // docs/versions.md "Yanking a version".
    await step('versions', 'keeperctl services yank NAME VERSION --reason "why"', {
      vars: { NAME: 'nginx', VERSION: 'v2' },
    });
    const yanked = await step('versions', 'keeperctl incarnations get', { extra: ['shop'] });
    assert.match(yanked.stdout, /version_yanked.*why/, yanked.stdout);
    const listed = await step('versions', 'keeperctl services versions', { extra: ['nginx'] });
    assert.match(listed.stdout, /v2 \(yanked: why\)/, listed.stdout);

    for (const d of DOCS) {
      const missed = inDocs.get(d)!.filter((c) => !walked.get(d)!.has(c));
      assert.deepEqual(missed, [], `docs/${d}.md shows keeperctl commands the walk does not run`);
    }
  });
});
