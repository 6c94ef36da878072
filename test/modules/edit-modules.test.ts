// The second shelf's file-editing modules on a clean Debian 12 root with systemd as PID 1
// (test/modules/systemd-root.ts), applied by the soul's own step handler (test/modules/in-root.ts):
// core.line.*, core.block.present, core.ini.set on files the distribution owns, core.sysctl.set
// (kernel.msgmax: an IPC parameter, which the root's own IPC namespace keeps to itself, so the
// machine's value is never touched), core.cron.*. Each change is planned (the plan shows the hunk
// only), applied, and applied again with no change; the rest of each file and its mode and owner stay.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { SystemdRoot } from './systemd-root';

interface Reply {
  changed: boolean;
  ok: boolean;
  output: string;
  diff?: Record<string, unknown>;
}
type Step = { module: string; params: Record<string, unknown> };

describe('file-editing state modules (line, block, ini, sysctl, cron) on a Debian 12 root with systemd', function () {
  this.timeout(900_000);
  let root: SystemdRoot;
  let applies = 0;

  before(async () => {
    root = await SystemdRoot.boot('edits-root');
  });
  after(async () => {
    await root?.stop();
  });

  async function apply(steps: Step[], opts: { dryRun?: boolean; showContent?: boolean } = {}): Promise<Reply[]> {
    const input = JSON.stringify({ applyId: `edits-${++applies}`, steps, ...opts });
    const out = await root.ok(['node', '/opt/keeper/dist/test/modules/in-root.js'], { input });
    return out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Reply);
  }

  /** Plans (with content), applies, applies again: the plan's verb is the apply's, the second apply changes nothing. */
  async function converge(steps: Step[]): Promise<{ plan: Reply[]; done: Reply[] }> {
    const plan = await apply(steps, { dryRun: true, showContent: true });
    const done = await apply(steps);
    for (const [i, p] of plan.entries()) {
      const d = done[i]!;
      assert.ok(p.ok && d.ok, `step ${i} (${steps[i]!.module}): plan ${p.output} / apply ${d.output}`);
      assert.equal(d.changed, p.changed, `step ${i}: plan ${p.output} / apply ${d.output}`);
      // The plan predicts the apply word for word: "would update X (...)" is "updated X (...)".
      if (p.changed) {
        const said = p.output
          .replace(/^would /, '')
          .replace(/ \(dry run\)$/, '')
          .replace(/; planned on the file as it is now, which an earlier step of this plan changes first$/, '');
        const past = said.replace(/^(update|create|remove) /, '$1d ');
        assert.equal(d.output, past, `step ${i}: the plan said ${p.output}`);
      }
    }
    const again = await apply(steps);
    assert.deepEqual(
      again.map((r) => [r.ok, r.changed]),
      steps.map(() => [true, false]),
      JSON.stringify(again),
    );
    return { plan, done };
  }

  const read = (p: string) => fs.readFileSync(root.path(p), 'utf8');
  const stat = (p: string) => {
    const st = fs.statSync(root.path(p));
    return { mode: (st.mode & 0o7777).toString(8), uid: st.uid, gid: st.gid };
  };
  /** The hunk lines of a unified diff (without its --- / +++ header). */
  const hunks = (r: Reply) =>
    String(r.diff?.unified ?? '')
      .split('\n')
      .slice(2)
      .filter(Boolean);

  it('line.present replaces one line of /etc/login.defs (mode and group kept, the plan shows its hunk); line.absent removes it', async () => {
    await root.ok(['chgrp', 'adm', '/etc/login.defs']);
    await root.ok(['chmod', '0640', '/etc/login.defs']);
    const before = read('/etc/login.defs');
    assert.match(before, /^PASS_MAX_DAYS\t99999$/m);
    const step = {
      module: 'core.line.present',
      params: { path: '/etc/login.defs', regexp: '^PASS_MAX_DAYS\\s', line: 'PASS_MAX_DAYS\t90' },
    };
    const { plan, done } = await converge([step]);
    const at = before.split('\n').indexOf('PASS_MAX_DAYS\t99999') + 1;
    assert.equal(plan[0]!.output, `would update /etc/login.defs (line ${at} replaced) (dry run)`);
    const h = hunks(plan[0]!);
    assert.equal(h[0], `@@ -${at - 3},7 +${at - 3},7 @@`);
    assert.deepEqual(
      h.filter((l) => /^[-+]/.test(l)),
      ['-PASS_MAX_DAYS\t99999', '+PASS_MAX_DAYS\t90'],
    );
    assert.equal(h.length, 9, 'one hunk: its header, three lines of context each side, the two changed lines');
    assert.equal(done[0]!.diff?.unified, undefined, 'an apply reports hashes, not content');
    assert.equal(read('/etc/login.defs'), before.replace('PASS_MAX_DAYS\t99999', 'PASS_MAX_DAYS\t90'));
    assert.deepEqual(stat('/etc/login.defs'), { mode: '640', uid: 0, gid: 4 });

    const added = await converge([
      {
        module: 'core.line.present',
        params: { path: '/etc/login.defs', line: 'SHA_CRYPT_MIN_ROUNDS 10000', insertafter: '^ENCRYPT_METHOD ' },
      },
    ]);
    assert.match(
      added.plan[0]!.output,
      /^would update \/etc\/login.defs \(line inserted after line \d+\) \(dry run\)$/,
    );
    assert.match(read('/etc/login.defs'), /^ENCRYPT_METHOD SHA512\nSHA_CRYPT_MIN_ROUNDS 10000$/m);

    const gone = await converge([
      {
        module: 'core.line.absent',
        params: { path: '/etc/login.defs', regexp: '^(PASS_MAX_DAYS|SHA_CRYPT_MIN_ROUNDS) ' },
      },
      { module: 'core.line.absent', params: { path: '/etc/login.defs', line: 'PASS_MAX_DAYS\t90' } },
    ]);
    assert.match(gone.plan[0]!.output, /^would update \/etc\/login.defs \(1 line removed \(line \d+\)\) \(dry run\)$/);
    assert.match(gone.done[1]!.output, /^updated \/etc\/login.defs \(1 line removed/);
    assert.match(
      gone.plan[1]!.output,
      /; planned on the file as it is now, which an earlier step of this plan changes first \(dry run\)$/,
    );
    assert.equal(read('/etc/login.defs'), before.replace('PASS_MAX_DAYS\t99999\n', ''));
    assert.deepEqual(stat('/etc/login.defs'), { mode: '640', uid: 0, gid: 4 });
  });

  it('block.present adds, replaces and (with empty content) removes a marked block of /etc/hosts', async () => {
    const before = read('/etc/hosts');
    const block = (content: string) => ({
      module: 'core.block.present',
      params: { path: '/etc/hosts', name: 'db', content },
    });
    const first = await converge([block('10.0.0.5\tdb\n10.0.0.6\tcache\n')]);
    assert.equal(first.plan[0]!.output, 'would update /etc/hosts (block db inserted at the end) (dry run)');
    assert.equal(read('/etc/hosts'), `${before}# BEGIN KEEPER db\n10.0.0.5\tdb\n10.0.0.6\tcache\n# END KEEPER db\n`);
    const second = await converge([block('10.0.0.7\tdb\n10.0.0.6\tcache\n')]);
    assert.deepEqual(
      hunks(second.plan[0]!).filter((l) => /^[-+]/.test(l)),
      ['-10.0.0.5\tdb', '+10.0.0.7\tdb'],
    );
    assert.match(second.done[0]!.output, /^updated \/etc\/hosts \(block db replaced \(lines \d+-\d+\)\)$/);
    assert.match((await root.ok(['getent', 'hosts', 'db'])).trim(), /^10\.0\.0\.7\s+db$/);
    const removed = await converge([block('')]);
    assert.match(removed.plan[0]!.output, /^would update \/etc\/hosts \(block db removed/);
    assert.equal(read('/etc/hosts'), before);
    // A begin marker without its end: the block's extent is unknown, nothing is written.
    fs.appendFileSync(root.path('/etc/hosts'), '# BEGIN KEEPER db\n');
    const [half] = await apply([block('10.0.0.5\tdb\n')]);
    assert.deepEqual([half!.ok, half!.changed], [false, false]);
    assert.match(half!.output, /but no "# END KEEPER db" follows it; add the end marker or remove the begin marker/);
  });

  it('ini.set adds a key to a section of journald.conf, changes it in its own style, and creates a new ini file', async () => {
    const before = read('/etc/systemd/journald.conf');
    const key = (value: string) => ({
      module: 'core.ini.set',
      params: { path: '/etc/systemd/journald.conf', section: 'Journal', key: 'SystemMaxUse', value, spaces: false },
    });
    const added = await converge([key('50M')]);
    assert.match(
      added.plan[0]!.output,
      /^would update \/etc\/systemd\/journald.conf \(key SystemMaxUse added \[Journal\] \(line \d+\)\) \(dry run\)$/,
    );
    assert.equal(read('/etc/systemd/journald.conf'), before.replace('[Journal]\n', '[Journal]\nSystemMaxUse=50M\n'));
    const changed = await converge([key('80M')]);
    assert.deepEqual(
      hunks(changed.plan[0]!).filter((l) => /^[-+]/.test(l)),
      ['-SystemMaxUse=50M', '+SystemMaxUse=80M'],
    );
    assert.match(await root.ok(['systemd-analyze', 'cat-config', 'systemd/journald.conf']), /^SystemMaxUse=80M$/m);
    // Two edits of a file that does not exist yet: the second's plan is made on the file as it is
    // now (missing) and says so; the apply then runs them in order.
    const two = [
      { module: 'core.ini.set', params: { path: '/etc/app/app.ini', section: 'server', key: 'port', value: 8080 } },
      { module: 'core.ini.set', params: { path: '/etc/app/app.ini', section: 'server', key: 'debug', value: false } },
    ];
    const plan = await apply(two, { dryRun: true, showContent: true });
    assert.deepEqual(
      plan.map((p) => p.output),
      [
        'would create /etc/app/app.ini (section [server] added with key port) (dry run)',
        'would create /etc/app/app.ini (section [server] added with key debug); planned on the file as it is now, which an earlier step of this plan changes first (dry run)',
      ],
    );
    assert.equal(fs.existsSync(root.path('/etc/app')), false, 'a plan creates nothing');
    assert.deepEqual(
      (await apply(two)).map((d) => d.output),
      [
        'created /etc/app/app.ini (section [server] added with key port)',
        'updated /etc/app/app.ini (key debug added [server] (line 3))',
      ],
    );
    assert.deepEqual(
      (await apply(two)).map((d) => [d.ok, d.changed]),
      [
        [true, false],
        [true, false],
      ],
    );
    assert.equal(read('/etc/app/app.ini'), '[server]\nport = 8080\ndebug = false\n');
    assert.deepEqual(stat('/etc/app/app.ini'), { mode: '644', uid: 0, gid: 0 });
  });

  it('sysctl.set sets kernel.msgmax live (in the root only) and in /etc/sysctl.d; an unknown name fails naming the param', async () => {
    const machine = fs.readFileSync('/proc/sys/kernel/msgmax', 'utf8');
    const live = async () => (await root.ok(['cat', '/proc/sys/kernel/msgmax'])).trim();
    const was = await live();
    const step = { module: 'core.sysctl.set', params: { name: 'kernel.msgmax', value: 16384, file: '60-ipc' } };
    const { plan, done } = await converge([step]);
    assert.equal(
      plan[0]!.output,
      `would set kernel.msgmax to 16384 (live ${was}->16384, /etc/sysctl.d/60-ipc.conf created) (dry run)`,
    );
    assert.deepEqual(plan[0]!.diff, {
      name: 'kernel.msgmax',
      live: { from: was, to: '16384' },
      file: {
        path: '/etc/sysctl.d/60-ipc.conf',
        created: true,
        edit: 'line added',
        unified:
          '--- a/etc/sysctl.d/60-ipc.conf\n+++ b/etc/sysctl.d/60-ipc.conf\n@@ -0,0 +1,1 @@\n+kernel.msgmax = 16384\n',
      },
    });
    assert.equal(done[0]!.output, `set kernel.msgmax to 16384 (live ${was}->16384, /etc/sysctl.d/60-ipc.conf created)`);
    assert.equal(await live(), '16384');
    assert.equal(read('/etc/sysctl.d/60-ipc.conf'), 'kernel.msgmax = 16384\n');
    assert.equal(fs.readFileSync('/proc/sys/kernel/msgmax', 'utf8'), machine, "the machine's own value is untouched");
    // Changed by hand, live only: the step puts it back, the file is left as it is.
    await root.ok(['sysctl', '-q', '-w', 'kernel.msgmax=9000']);
    const [back] = await apply([step]);
    assert.deepEqual([back!.changed, back!.output], [true, 'set kernel.msgmax to 16384 (live 9000->16384)']);
    // What systemd-sysctl applies at boot is the persisted value.
    await root.ok(['sysctl', '-q', '-w', 'kernel.msgmax=9000']);
    await root.ok(['/lib/systemd/systemd-sysctl', '/etc/sysctl.d/60-ipc.conf']);
    assert.equal(await live(), '16384');
    const [unknown] = await apply([{ module: 'core.sysctl.set', params: { name: 'kernel.no_such_thing', value: 1 } }]);
    assert.deepEqual([unknown!.ok, unknown!.changed], [false, false]);
    assert.match(unknown!.output, /this kernel has no parameter kernel.no_such_thing .*check param "name"/);
  });

  it('cron.present writes /etc/cron.d/<name> root-owned 0644 (and puts a loosened mode back); cron.absent removes it', async () => {
    const job = {
      module: 'core.cron.present',
      params: {
        name: 'keeper-backup',
        schedule: '*/15 * * * *',
        command: 'date +\\%F >> /var/log/backup.log',
        env: { MAILTO: '' },
      },
    };
    const { plan } = await converge([job]);
    assert.equal(plan[0]!.output, 'would create /etc/cron.d/keeper-backup (job keeper-backup) (dry run)');
    assert.equal(
      read('/etc/cron.d/keeper-backup'),
      '# core.cron.present keeper-backup: written by Keeper; an edit here is replaced on its next run.\nMAILTO=\n*/15 * * * * root date +\\%F >> /var/log/backup.log\n',
    );
    assert.deepEqual(stat('/etc/cron.d/keeper-backup'), { mode: '644', uid: 0, gid: 0 });
    await root.ok(['chmod', '0666', '/etc/cron.d/keeper-backup']);
    const fixed = await converge([job]);
    assert.equal(fixed.done[0]!.output, 'updated /etc/cron.d/keeper-backup (mode 0666->0644)');
    const changed = await converge([{ ...job, params: { ...job.params, schedule: '@daily', user: 'nobody' } }]);
    assert.deepEqual(
      hunks(changed.plan[0]!).filter((l) => /^[-+]/.test(l)),
      ['-*/15 * * * * root date +\\%F >> /var/log/backup.log', '+@daily nobody date +\\%F >> /var/log/backup.log'],
    );
    const gone = await converge([{ module: 'core.cron.absent', params: { name: 'keeper-backup' } }]);
    assert.equal(gone.done[0]!.output, 'removed /etc/cron.d/keeper-backup (cron job keeper-backup)');
    assert.equal(fs.existsSync(root.path('/etc/cron.d/keeper-backup')), false);
  });

  it('bad params are refused before anything is read, naming the param and the fix', async () => {
    const replies = await apply([
      { module: 'core.line.present', params: { path: '/etc/login.defs', line: 'x', regexp: '^(?P<k>PASS)' } },
      { module: 'core.line.present', params: { path: '/etc/nothing-here', line: 'x' } },
      { module: 'core.block.present', params: { path: '/etc/hosts', name: 'a', content: 'x', marker: '# a block' } },
      { module: 'core.ini.set', params: { path: '/etc/a.ini', key: 'k', value: 'v', section: '[s]' } },
      { module: 'core.cron.present', params: { name: 'job', schedule: '@daily', command: 'date +%F' } },
      { module: 'core.sysctl.set', params: { name: 'kernel.msgmax', value: 'lots' } },
    ]);
    assert.ok(
      replies.every((r) => !r.ok && !r.changed),
      JSON.stringify(replies),
    );
    const out = replies.map((r) => r.output);
    assert.match(
      out[0]!,
      /^core.line.present: invalid params: parameter "regexp" is not a valid JavaScript regular expression: .*\(a named group is \(\?<name>\.\.\.\), not \(\?P<name>\.\.\.\)\)/,
    );
    assert.match(
      out[1]!,
      /^core.line.present: reading current state failed: \/etc\/nothing-here does not exist; .*set param "create": true$/,
    );
    assert.match(out[2]!, /^core.block.present: invalid params: parameter "marker" has an invalid value/);
    assert.match(out[3]!, /^core.ini.set: invalid params: parameter "section" has an invalid value/);
    assert.match(
      out[4]!,
      /^core.cron.present: invalid params: parameter "command" holds an unescaped %.*write \\% for a literal %/,
    );
    assert.match(out[5]!, /^core.sysctl.set: apply failed: the kernel refused lots for kernel.msgmax/);
    assert.equal(fs.existsSync(root.path('/etc/a.ini')), false);
  });
});
