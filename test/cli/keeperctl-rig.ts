// The one keeper, soul and operator home that keeperctl.test.ts's groups share: the real program
// (bin/keeperctl) in its own process, with HOME and the temp dir of the test's own, against a test
// keeper on the real stack with one soul in coven edge. The groups run in order on the same cluster
// (the login of the first is the saved cluster of the others; incarnations made early are used late).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { startRunKeeper, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import { type Result, runKeeperctl } from '../support/keeperctl-process';

export { BIN } from '../support/keeperctl-process';

export interface KeeperctlRig {
  /** Filled by the rig's before(): read it in a hook or test, not while tests are being declared. */
  state: { k: TestKeeper; root: string; home: string; out: string; souls: TestSoul[] };
  /** The environment every keeperctl process gets: PATH, the test's HOME and its temp dir, nothing else. */
  baseEnv(): NodeJS.ProcessEnv;
  ctl(args: string[], opts?: { env?: NodeJS.ProcessEnv; input?: string }): Promise<Result>;
  ok(r: Result): void;
  /** The inputs of the motd service's runs, with `extra` after them. */
  input(extra?: string[]): string[];
}

/** Declares the rig's before() and after() in the calling describe and returns the rig. */
export function keeperctlRig(): KeeperctlRig {
  const state = {} as KeeperctlRig['state'];
  const baseEnv = (): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'],
      HOME: state.home,
      XDG_CONFIG_HOME: path.join(state.home, '.config'),
      TMPDIR: state.root,
    };
    return env;
  };

  const ctl = (args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string } = {}) =>
    runKeeperctl(args, { ...baseEnv(), ...opts.env }, opts.input);
  const ok = (r: Result) => assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  const input = (extra: string[] = []) => [
    '--input',
    `root=${state.out}`,
    '--input',
    'message=from keeperctl',
    '--input',
    'package=git',
    ...extra,
  ];

  before(async () => {
    state.root = tempDir('keeperctl-');
    state.home = path.join(state.root, 'home');
    state.out = path.join(state.root, 'out');
    fs.mkdirSync(state.home);
    state.k = await startRunKeeper();
    fs.writeFileSync(path.join(state.root, 'admin.jwt'), state.k.adminToken, { mode: 0o600 });
    state.souls = await startSouls(state.k, path.join(state.root, 'souls'), [['edge']]);
  });
  after(async () => {
    const { k, root, souls } = state;
    // The drift check's Temporal Schedule outlives this keeper; left on, it would keep a check waiting
    // on this keeper's task queue for ever, and a later run of this file would find it skipping.
    if (k)
      await ctl(['incarnations', 'drift', 'motd-edge', '--off'], {
        env: { KEEPER_URL: k.baseUrl, KEEPER_TOKEN: k.adminToken },
      }).catch(() => undefined);
    try {
      execFileSync('tmux', ['kill-server'], { stdio: 'ignore', env: { ...process.env, TMUX_TMPDIR: root } });
    } catch {
      /* none running */
    }
    await Promise.all((souls ?? []).map((s) => s.run.kill()));
    await k?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  return { state, baseEnv, ctl, ok, input };
}
