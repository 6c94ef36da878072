// keeperctl's help, completion scripts and its live display in a real pseudo-terminal (tmux).
// The rig and the order of the groups: keeperctl.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { TestSoul } from '../runs/keeper';
import { BIN, type KeeperctlRig } from './keeperctl-rig';

/** keeperctl: --help, completion scripts and the live display on a terminal. */
export function terminalTests(rig: KeeperctlRig): void {
  const { ctl, ok, input, baseEnv } = rig;
  let root: string;
  let souls: TestSoul[];
  // The rig's before() has filled rig.state by now: hooks run in the order they were registered.
  before(() => {
    ({ root, souls } = rig.state);
  });
  it('every command has --help with an example; completion scripts for bash and zsh', async () => {
    const commands = [
      [],
      ['souls'],
      ['souls', 'list'],
      ['souls', 'get'],
      ['souls', 'add'],
      ['souls', 'covens'],
      ['souls', 'issue-token'],
      ['souls', 'revoke'],
      ['souls', 'delete'],
      ['souls', 'check'],
      ['services'],
      ['services', 'add'],
      ['services', 'list'],
      ['services', 'get'],
      ['services', 'publish'],
      ['services', 'versions'],
      ['services', 'version'],
      ['incarnations'],
      ['incarnations', 'list'],
      ['incarnations', 'create'],
      ['incarnations', 'get'],
      ['incarnations', 'history'],
      ['incarnations', 'runs'],
      ['incarnations', 'run-report'],
      ['incarnations', 'plan'],
      ['incarnations', 'plans'],
      ['incarnations', 'plan-report'],
      ['incarnations', 'apply-plan'],
      ['incarnations', 'unlock'],
      ['incarnations', 'upgrade'],
      ['incarnations', 'drift'],
      ['incarnations', 'delete'],
      ['archons'],
      ['archons', 'list'],
      ['archons', 'get'],
      ['archons', 'create'],
      ['archons', 'token'],
      ['run'],
      ['login'],
      ['logout'],
      ['use'],
      ['clusters'],
      ['completion'],
    ];
    for (const c of commands) {
      const r = await ctl([...c, '--help']);
      assert.equal(r.code, 0, `${c.join(' ')} --help: ${r.stderr}`);
      assert.match(r.stdout, /Examples:\n\s+keeperctl /, `${c.join(' ') || '(top)'} --help has an example`);
    }
    const bash = await ctl(['completion'], { env: { SHELL: '/bin/bash' } });
    ok(bash);
    assert.match(bash.stdout, /complete -o bashdefault -o default -F _keeperctl_yargs_completions keeperctl/);
    const zsh = await ctl(['completion'], { env: { SHELL: '/usr/bin/zsh' } });
    ok(zsh);
    assert.match(zsh.stdout, /compdef _keeperctl_yargs_completions keeperctl/);
    // What the scripts call on <TAB>: the subcommands of `souls` and `incarnations`, from the same command table as --help.
    const tab = await ctl(['--get-yargs-completions', 'keeperctl', 'souls', '']);
    ok(tab);
    for (const c of ['list', 'get', 'add', 'covens', 'issue-token', 'revoke', 'delete', 'check'])
      assert.ok(tab.stdout.split('\n').includes(c), tab.stdout);
    const incTab = await ctl(['--get-yargs-completions', 'keeperctl', 'incarnations', '']);
    ok(incTab);
    for (const c of ['runs', 'plan', 'plans', 'plan-report', 'apply-plan', 'drift', 'delete'])
      assert.ok(incTab.stdout.split('\n').includes(c), incTab.stdout);
  });

  it('on a terminal, run draws a live per-host display and ends with the outcome (tmux)', async () => {
    const env = { ...baseEnv(), TMUX_TMPDIR: root, TERM: 'xterm-256color' };
    const cmd = [
      process.execPath,
      BIN,
      'run',
      'motd-edge',
      'create',
      '--yes',
      ...input(['--input', 'message=on a terminal']),
    ]
      .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
      .join(' ');
    execFileSync(
      'tmux',
      ['new-session', '-d', '-s', 'ctl', '-x', '120', '-y', '30', `${cmd}; echo EXIT=$?; sleep 60`],
      { env },
    );
    let screen = '';
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      screen = execFileSync('tmux', ['capture-pane', '-p', '-t', 'ctl'], { env }).toString();
      if (/EXIT=\d+/.test(screen)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    execFileSync('tmux', ['kill-session', '-t', 'ctl'], { env });
    assert.match(screen, /EXIT=0/, screen);
    // The block was redrawn in place: one header and one count line remain on the screen, not one per poll.
    assert.equal(screen.match(/^run motd-edge\/create /gm)?.length, 1, screen);
    assert.match(screen, /^hosts 1\/1 done: changed 1, ok 0, failed 0, unknown 0, skipped 0$/m);
    assert.match(
      screen,
      new RegExp(`^  ${souls[0]!.sid.replace(/\./g, '\\.')}\\s+changed\\s+3 steps, \\d changed$`, 'm'),
    );
    assert.match(screen, /succeeded: motd-edge is ready/);
  });
}
