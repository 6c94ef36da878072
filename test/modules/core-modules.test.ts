// The core state modules against a real init system: a clean Debian 12 root with systemd as PID 1
// (test/modules/systemd-root.ts), where the soul's own step handler (agent/steps.ts, with its ledger)
// applies each step (test/modules/in-root.ts). Every change is planned first (a dry run) and the
// plan must say exactly what the apply then does; a second apply must change nothing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { SystemdRoot } from './systemd-root';

interface Reply {
  changed: boolean;
  ok: boolean;
  output: string;
  replayed: boolean;
  diff?: Record<string, unknown>;
}
type Step = { module: string; params: Record<string, unknown> };

describe('core state modules on a Debian 12 root with systemd as PID 1', function () {
  // First run on a machine: mmdebstrap builds the root (a few minutes, then cached).
  this.timeout(900_000);
  let root: SystemdRoot;
  let applies = 0;

  before(async () => {
    root = await SystemdRoot.boot();
  });
  after(async () => {
    await root?.stop();
  });

  async function apply(steps: Step[], opts: { dryRun?: boolean; showContent?: boolean } = {}): Promise<Reply[]> {
    const input = JSON.stringify({ applyId: `apply-${++applies}`, steps, ...opts });
    const out = await root.ok(['node', '/opt/keeper/dist/test/modules/in-root.js'], { input });
    return out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Reply);
  }

  /** Plans, applies, re-applies: the plan predicts the apply exactly; the second apply is a no-op. */
  async function converge(steps: Step[]): Promise<{ plan: Reply[]; done: Reply[] }> {
    const plan = await apply(steps, { dryRun: true, showContent: true });
    const done = await apply(steps);
    for (const [i, p] of plan.entries()) {
      const d = done[i]!;
      assert.ok(p.ok && d.ok, `step ${i} (${steps[i]!.module}): plan ${p.output} / apply ${d.output}`);
      assert.equal(d.changed, p.changed, `step ${i}: the plan said changed=${p.changed}, the apply ${d.changed}`);
      if (p.changed)
        assert.equal(
          p.output
            .replace(/^would /, '')
            .replace(/ \(dry run\)$/, '')
            .split(' ')[0],
          verbOf(d.output),
          `step ${i}: ${p.output} / ${d.output}`,
        );
    }
    const again = await apply(steps);
    assert.deepEqual(
      again.map((r) => [r.ok, r.changed]),
      steps.map(() => [true, false]),
      JSON.stringify(again),
    );
    return { plan, done };
  }
  // "created x" -> "create", "stopped nginx" -> "stop": the apply's past tense of the plan's verb.
  const verbOf = (output: string) =>
    (
      ({
        created: 'create',
        stopped: 'stop',
        started: 'start',
        disabled: 'disable',
        enabled: 'enable',
        removed: 'remove',
        linked: 'link',
        changed: 'change',
        updated: 'update',
        purged: 'purge',
        installed: 'install',
        ran: 'run',
        reloaded: 'reload',
      }) as Record<string, string>
    )[output.split(' ')[0]!] ?? output.split(' ')[0];

  const active = async (unit: string) => (await root.run(['systemctl', 'is-active', unit])).stdout.trim();
  const enabled = async (unit: string) => (await root.run(['systemctl', 'is-enabled', unit])).stdout.trim();

  it('service stopped and disabled, then running and enabled: the plan names each systemctl action', async () => {
    assert.equal(await active('nginx'), 'active');
    const { plan } = await converge([{ module: 'core.service.stopped', params: { name: 'nginx', enabled: false } }]);
    assert.equal(plan[0]!.output, 'would stop nginx, disable nginx at boot (dry run)');
    assert.deepEqual([await active('nginx'), await enabled('nginx')], ['inactive', 'disabled']);
    const up = await converge([{ module: 'core.service.running', params: { name: 'nginx', enabled: true } }]);
    assert.deepEqual(up.done[0]!.output, 'started nginx, enabled nginx at boot');
    assert.deepEqual([await active('nginx'), await enabled('nginx')], ['active', 'enabled']);
  });

  it('reloaded keeps the master PID and replaces the workers; restarted replaces the master', async () => {
    const before = await root.pids('nginx');
    assert.ok(before.main > 0 && before.others.length > 0);
    const plan = await apply([{ module: 'core.service.reloaded', params: { name: 'nginx' } }], { dryRun: true });
    assert.deepEqual([plan[0]!.changed, plan[0]!.output], [true, 'would reload nginx (dry run)']);
    assert.deepEqual(await root.pids('nginx'), before, 'a plan does not reload');
    const [r] = await apply([{ module: 'core.service.reloaded', params: { name: 'nginx' } }]);
    assert.deepEqual([r!.ok, r!.changed, r!.output], [true, true, 'reloaded nginx']);
    let after = await root.pids('nginx');
    // The old workers finish their requests and exit; the new ones are started by the same master.
    for (let i = 0; i < 50 && after.others.some((p) => before.others.includes(p)); i++) {
      await new Promise((res) => setTimeout(res, 100));
      after = await root.pids('nginx');
    }
    assert.equal(after.main, before.main);
    assert.ok(
      after.others.length > 0 && after.others.every((p) => !before.others.includes(p)),
      JSON.stringify({ before, after }),
    );
    const [rs] = await apply([{ module: 'core.service.restarted', params: { name: 'nginx' } }]);
    assert.deepEqual([rs!.changed, rs!.output], [true, 'restarted nginx']);
    assert.notEqual((await root.pids('nginx')).main, before.main);
  });

  it('a unit file changed earlier in the same apply is re-read (daemon-reload) before the service acts, in the plan too', async () => {
    const unit = {
      module: 'core.file.present',
      params: { path: '/etc/systemd/system/keeper-probe.service', content: '[Service]\nExecStart=/bin/sleep 1000\n' },
    };
    const steps = [unit, { module: 'core.service.running', params: { name: 'keeper-probe' } }];
    const plan = await apply(steps, { dryRun: true });
    assert.equal(plan[1]!.output, 'would reload unit files (daemon-reload), start keeper-probe (dry run)');
    const done = await apply(steps);
    assert.equal(done[1]!.output, 'reloaded unit files (daemon-reload), started keeper-probe');
    assert.equal(await active('keeper-probe'), 'active');
    const edited = await apply([
      { ...unit, params: { ...unit.params, content: '[Service]\nExecStart=/bin/sleep 2000\n' } },
      { module: 'core.service.restarted', params: { name: 'keeper-probe' } },
    ]);
    assert.equal(edited[1]!.output, 'reloaded unit files (daemon-reload), restarted keeper-probe');
    assert.match(await root.ok(['systemctl', 'show', '--property=ExecStart', '--value', 'keeper-probe']), /sleep 2000/);
    // Removed by a later step of a destroy: the next service step re-reads, and systemd forgets it.
    const gone = await apply([
      { module: 'core.service.stopped', params: { name: 'keeper-probe' } },
      { module: 'core.file.absent', params: { path: unit.params.path } },
      { module: 'core.service.stopped', params: { name: 'keeper-probe' } },
    ]);
    assert.equal(gone[2]!.output, 'reloaded unit files (daemon-reload)');
    assert.equal(
      (await root.ok(['systemctl', 'show', '--property=LoadState', '--value', 'keeper-probe'])).trim(),
      'not-found',
    );
  });

  it('daemon_reload: true re-reads a unit file written outside the apply before the service acts', async () => {
    await root.ok([
      'sh',
      '-c',
      'printf "[Service]\\nExecStart=/bin/sleep 1000\\n" > /etc/systemd/system/keeper-outside.service',
    ]);
    const steps = [{ module: 'core.service.running', params: { name: 'keeper-outside', daemon_reload: true } }];
    const done = await apply(steps);
    assert.deepEqual([done[0]!.ok, done[0]!.output], [true, 'started keeper-outside']);
    assert.equal(await active('keeper-outside'), 'active');
    // Edited outside again: re-read before the unit is read, so nothing is left to do and no change is reported.
    await root.ok(['sed', '-i', 's/sleep 1000/sleep 2000/', '/etc/systemd/system/keeper-outside.service']);
    const again = await apply(steps);
    assert.deepEqual([again[0]!.ok, again[0]!.changed, again[0]!.output], [true, false, 'keeper-outside is running']);
    const show = await root.ok([
      'systemctl',
      'show',
      '--property=NeedDaemonReload',
      '--property=ExecStart',
      'keeper-outside',
    ]);
    assert.match(show, /NeedDaemonReload=no/);
    assert.match(show, /sleep 2000/);
    await apply([{ module: 'core.service.stopped', params: { name: 'keeper-outside' } }]);
  });

  it('cmd.run: creates, unless and onlyif guards decide, the plan says which and why (arguments only without a secret), output captured and capped, timeout enforced', async () => {
    const make = { module: 'core.cmd.run', params: { argv: ['/usr/bin/touch', '/srv/made'], creates: '/srv/made' } };
    const { plan, done } = await converge([make]);
    assert.equal(plan[0]!.output, 'would run `/usr/bin/touch /srv/made` (creates: /srv/made does not exist) (dry run)');
    assert.deepEqual(plan[0]!.diff, {
      command: ['/usr/bin/touch', '/srv/made'],
      because: 'creates: /srv/made does not exist',
    });
    assert.match(done[0]!.output, /^ran \/usr\/bin\/touch, exit 0/);
    assert.ok(fs.existsSync(root.path('/srv/made')));
    const unless = await apply(
      [{ module: 'core.cmd.run', params: { argv: ['/bin/echo', 'hi'], unless: ['/usr/bin/test', '-e', '/srv/made'] } }],
      { dryRun: true },
    );
    assert.deepEqual([unless[0]!.changed, unless[0]!.output], [false, 'not run: unless: `/usr/bin/test` exited 0']);
    const onlyif = await apply([
      {
        module: 'core.cmd.run',
        params: { argv: ['hi there'], shell: true, onlyif: ['/usr/bin/test', '-e', '/srv/made'] },
      },
    ]);
    assert.equal(onlyif[0]!.ok, false, 'the shell command "hi there" does not exist');
    const echoed = await apply([
      {
        module: 'core.cmd.run',
        params: {
          argv: ['echo "$GREETING" from $(pwd)'],
          shell: true,
          cwd: '/srv',
          env: { GREETING: 'hello' },
          onlyif: ['/usr/bin/test', '-e', '/srv/made'],
        },
      },
    ]);
    assert.deepEqual(
      [echoed[0]!.changed, echoed[0]!.output],
      [true, 'ran /bin/sh -c, exit 0 (onlyif: `/usr/bin/test` exited 0)\nstdout:\nhello from /srv'],
    );
    // A plan for a step holding a secret (the keeper says showContent: false) names the program only.
    const secret = await apply([{ module: 'core.cmd.run', params: { argv: ['/usr/bin/test', 'hunter2', '=', 'x'] } }], {
      dryRun: true,
    });
    assert.equal(
      secret[0]!.output,
      'would run /usr/bin/test (arguments not shown: the step may hold a secret): runs every time (no guard) (dry run)',
    );
    assert.doesNotMatch(JSON.stringify(secret), /hunter2/);
    const slow = await apply([{ module: 'core.cmd.run', params: { argv: ['/bin/sleep', '30'], timeout: 1 } }]);
    assert.deepEqual([slow[0]!.ok, slow[0]!.changed], [false, false]);
    assert.match(slow[0]!.output, /\/bin\/sleep exited 143 .*ended by SIGTERM \(timed out or killed\)/s);
    const loud = await apply([
      { module: 'core.cmd.run', params: { argv: ['head -c 100000 /dev/zero | tr "\\0" x'], shell: true } },
    ]);
    assert.equal(loud[0]!.ok, true);
    assert.match(
      loud[0]!.output,
      /^ran \/bin\/sh -c, exit 0 \(no guard\)\nstdout:\n\[first 83616 bytes cut\]\nx{16384}$/,
    );
    const failing = await apply([{ module: 'core.cmd.run', params: { argv: ['/bin/false'] } }]);
    assert.deepEqual([failing[0]!.ok, failing[0]!.changed], [false, false]);
    assert.match(failing[0]!.output, /\/bin\/false exited 1/);
  });

  it('user and group present with ids, groups, home and shell; then absent', async () => {
    const steps = [
      { module: 'core.group.present', params: { name: 'webops', gid: 2100 } },
      {
        module: 'core.user.present',
        params: { name: 'web', uid: 2101, groups: ['webops'], home: '/srv/web', shell: '/bin/sh', system: false },
      },
    ];
    const { plan } = await converge(steps);
    assert.deepEqual(
      plan.map((p) => p.output),
      ['would create group webops (gid 2100) (dry run)', 'would create user web (uid 2101) (dry run)'],
    );
    assert.equal((await root.ok(['id', 'web'])).trim(), 'uid=2101(web) gid=2101(web) groups=2101(web),2100(webops)');
    assert.match(await root.ok(['getent', 'passwd', 'web']), /^web:x:2101:2101::\/srv\/web:\/bin\/sh$/m);
    const changed = await converge([
      { module: 'core.user.present', params: { name: 'web', shell: '/bin/bash', groups: [] } },
    ]);
    assert.deepEqual(changed.plan[0]!.diff, {
      user: 'web',
      shell: { from: '/bin/sh', to: '/bin/bash' },
      groups: { from: ['webops'], to: [] },
    });
    const gone = await converge([
      { module: 'core.user.absent', params: { name: 'web', remove_home: true } },
      { module: 'core.group.absent', params: { name: 'webops' } },
    ]);
    assert.deepEqual(
      gone.done.map((d) => d.output),
      ['removed user web', 'removed group webops'],
    );
    assert.equal((await root.run(['getent', 'passwd', 'web'])).code, 2);
    assert.equal(fs.existsSync(root.path('/srv/web')), false);
  });

  it('directory with mode and owner, a link, then file and directory absent; / and system folders refused', async () => {
    await converge([
      { module: 'core.group.present', params: { name: 'site' } },
      { module: 'core.user.present', params: { name: 'site', system: true, create_home: false, group: 'site' } },
    ]);
    const { plan } = await converge([
      { module: 'core.dir.present', params: { path: '/srv/site/www', mode: '0750', owner: 'site', group: 'site' } },
      {
        module: 'core.file.present',
        params: { path: '/etc/nginx/sites-available/site', content: 'server { listen 8081; root /srv/site/www; }\n' },
      },
      {
        module: 'core.link.present',
        params: { path: '/etc/nginx/sites-enabled/site', target: '/etc/nginx/sites-available/site' },
      },
    ]);
    assert.match(plan[0]!.output, /^would create directory \/srv\/site\/www \(mode 0750\) and its parents \/srv\/site/);
    const st = fs.statSync(root.path('/srv/site/www'));
    assert.equal(st.mode & 0o7777, 0o750);
    assert.equal(String(st.uid), (await root.ok(['id', '-u', 'site'])).trim());
    assert.equal(fs.readlinkSync(root.path('/etc/nginx/sites-enabled/site')), '/etc/nginx/sites-available/site');
    const refused = await apply([
      { module: 'core.dir.absent', params: { path: '/etc' } },
      { module: 'core.dir.absent', params: { path: '/var/lib' } },
    ]);
    assert.ok(
      refused.every((r) => !r.ok),
      JSON.stringify(refused),
    );
    assert.match(refused[0]!.output, /refusing to remove \/etc: a system folder/);
    const root1 = await apply([{ module: 'core.dir.absent', params: { path: '/' } }]);
    assert.deepEqual([root1[0]!.ok, root1[0]!.changed], [false, false]);
    const soul = await apply([{ module: 'core.dir.absent', params: { path: '/var/lib/soul/ledger' } }]);
    assert.match(soul[0]!.output, /the soul's own \/var\/lib\/soul/);
    const gone = await converge([
      { module: 'core.file.absent', params: { path: '/etc/nginx/sites-enabled/site' } },
      { module: 'core.file.absent', params: { path: '/etc/nginx/sites-available/site' } },
      { module: 'core.dir.absent', params: { path: '/srv/site' } },
    ]);
    assert.deepEqual(
      gone.plan.map((p) => p.output),
      [
        'would remove symlink /etc/nginx/sites-enabled/site (dry run)',
        'would remove file /etc/nginx/sites-available/site (dry run)',
        'would remove directory /srv/site and everything in it (dry run)',
      ],
    );
    assert.deepEqual(
      ['/etc/nginx/sites-enabled/site', '/srv/site'].map((p) => fs.existsSync(root.path(p))),
      [false, false],
    );
  });

  it("a list of packages purged and installed again in one apt call each (from the root's kept package cache)", async () => {
    const removed = await converge([{ module: 'core.pkg.removed', params: { name: ['less', 'ed'] } }]);
    assert.equal(removed.plan[0]!.output, 'would purge less ed with apt (dry run)');
    assert.equal(removed.done[0]!.output, 'purged less ed with apt-get');
    assert.equal((await root.run(['dpkg-query', '-W', '-f=${Status}', 'less'])).stdout.includes('ok installed'), false);
    const installed = await converge([{ module: 'core.pkg.installed', params: { name: ['less', 'ed'] } }]);
    assert.equal(installed.plan[0]!.output, 'would install less ed with apt (dry run)');
    assert.equal(installed.done[0]!.output, 'installed less ed with apt-get');
    assert.match(
      await root.ok(['dpkg-query', '-W', '-f=${Status}\\n', 'less', 'ed']),
      /^install ok installed\ninstall ok installed\n$/,
    );
  });
});
