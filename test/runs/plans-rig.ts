// The rig of the plan suites (test/runs/plans.test.ts, plans-create.test.ts), on the real
// stack with real souls: a keeper, two souls (covens web+pkg and web), the service `plan` at v1 from a
// local git repository and the incarnation `shop` ready on web; and the helpers the suites read
// hosts, ledgers and plans with. Both suites share one rig (their tests touch different
// incarnations): it starts in the first suite's before() and stops after the last suite's after().
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { runKeeperctl } from '../support/keeperctl-process';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, stopRunRig, tempDir, type TestSoul } from './keeper';

/** A small Debian package no test machine has: the plan shows it would be installed, the apply installs it. */
export const PACKAGE = 'hello';
export const installedVersion = () => {
  const r = spawnSync('dpkg-query', ['-W', '-f', '${Status} ${Version}', PACKAGE], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.startsWith('install ok installed') ? r.stdout.split(' ').pop()! : null;
};
export const removePackage = () => {
  if (installedVersion() !== null) execFileSync('dpkg', ['--purge', PACKAGE], { stdio: 'pipe' });
};
export const candidate = () =>
  /Candidate:\s*(\S+)/.exec(execFileSync('apt-cache', ['policy', PACKAGE], { encoding: 'utf8' }))![1]!;

/** Every file under a directory with its content: a soul's ledger before and after must be equal. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out[path.relative(dir, p)] = fs.readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

/** What the rig's before() fills in: hooks run in the order they are registered. */
export interface PlansState {
  k: TestKeeper;
  root: string;
  souls: TestSoul[];
}

async function startRig(state: PlansState): Promise<void> {
  removePackage();
  const root = tempDir('plans-');
  state.root = root;
  const url = gitRepoFrom(
    path.join(repoRoot(), 'test', 'fixtures', 'services', 'plan'),
    path.join(root, 'plan.git'),
    'v1',
  );
  const k = await startRunKeeper();
  state.k = k;
  state.souls = await startSouls(k, path.join(root, 'souls'), [['web', 'pkg'], ['web']]);
  assert.equal((await api(k, 'POST', '/v1/services', { name: 'plan', git: url, ref: 'v1' })).status, 201);
  const c = await api(k, 'POST', '/v1/incarnations', {
    name: 'shop',
    service: 'plan',
    covens: ['web'],
    input: { root, port: 80, greeting: 'hello' },
  });
  assert.equal(c.status, 202, JSON.stringify(c.body));
  assert.equal((await settled(k, 'shop')).status, 'ready');
}

/** The shared rig: how many suites registered it (at load, before any hook runs), and its start. */
const shared = {
  users: 0,
  state: { souls: [] } as unknown as PlansState,
  started: undefined as Promise<void> | undefined,
};
const stopShared = async () => {
  if (!shared.started) return;
  await shared.started.catch(() => undefined);
  shared.started = undefined;
  await stopRunRig(shared.state);
  removePackage();
};
// Registered at load, outside any describe: the run's own end stops the rig if a suite left out of
// the run (--grep) never ran its after().
after(stopShared);

/** Registers the suite's before() and after() and returns the state they fill and the helpers. */
export function plansRig() {
  shared.users++;
  const state = shared.state;
  const file = (s: TestSoul, name: string) => path.join(state.root, s.sid, name);
  const read = (s: TestSoul, name: string) => fs.readFileSync(file(s, name), 'utf8');
  const ledger = (s: TestSoul) => snapshot(path.join(s.dir, 'seed', 'ledger'));
  const plan = async (body: Record<string, unknown>) => {
    const r = await api(state.k, 'POST', '/v1/incarnations/shop/plans', body);
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const got = await api(state.k, 'GET', `${r.body.plan}?wait=60s`);
    assert.equal(got.status, 200, JSON.stringify(got.body));
    return got.body;
  };
  const host = (p: any, s: TestSoul) => p.hosts.find((h: any) => h.sid === s.sid);
  /** keeperctl against the test keeper, as an operator runs it. */
  const ctl = (args: string[]) =>
    runKeeperctl(args, {
      PATH: process.env['PATH'],
      HOME: state.root,
      KEEPER_URL: state.k.baseUrl,
      KEEPER_TOKEN: state.k.adminToken,
    });

  before(() => (shared.started ??= startRig(state)));
  after(async () => {
    if (--shared.users === 0) await stopShared();
  });
  return { state, file, read, ledger, plan, host, ctl };
}
