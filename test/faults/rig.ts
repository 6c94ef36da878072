// A live fleet for a fault scenario: a keeper as its own process (`bin/keeper run`, so it can be
// killed for real) whose config may point at private dependencies, real souls in their own UTS
// namespaces, and a service whose steps are slow enough for a fault to land mid-run: each step writes
// a file (changed) and is confirmed by a re-send `delay` seconds later (unchanged, ending its `until`).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cleanupKeeperFiles, initTestKeeper, type InitializedKeeper } from '../support/keeper';
import type { TestDatabase } from '../support/database';
import { api, gitRepoFrom, spawnKeeper, startSouls, tempDir, waitFor, type KeeperProcess, type TestSoul } from '../runs/keeper';
import { checkHistory, ledgerLines, type HistoryReport } from './history';

export function writeSlowService(dir: string, steps: number, delaySec: number): void {
  fs.mkdirSync(path.join(dir, 'scenario', 'create'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'service.yml'), 'name: slowfiles\nstate_schema_version: 1\n');
  const tasks = Array.from({ length: steps }, (_, i) => `  - name: file ${i}
    module: core.file.present
    params:
      path: "\${input.root}/\${soulprint.self.fqdn}/f${i}"
      content: "f${i} on \${soulprint.self.fqdn}\\n"
      mode: "0644"
    until: "result.changed == false"
    retries: 3
    delay: ${delaySec}
`).join('');
  fs.writeFileSync(path.join(dir, 'scenario', 'create', 'main.yml'), `description: ${steps} slow files on every host.
input:
  root:
    type: string
state_changes:
  sets:
    root: "\${input.root}"
tasks:
${tasks}`);
}

export interface RigOptions {
  db?: TestDatabase;
  mutate?: (doc: Record<string, any>) => void;
  covens?: string[][];
  steps?: number;
  delaySec?: number;
}

export interface Rig {
  root: string; out: string; k: InitializedKeeper; keeper: KeeperProcess; souls: TestSoul[];
  /** Creates incarnation `name` on every soul; returns the run's apply_id. */
  create(name: string): Promise<string>;
  report(name: string, applyId: string): Promise<any>;
  restartKeeper(): Promise<void>;
  check(): Promise<HistoryReport>;
  stop(): Promise<void>;
}

export async function startRig(opts: RigOptions = {}): Promise<Rig> {
  const root = tempDir('faults-');
  const out = path.join(root, 'out');
  const src = path.join(root, 'slowfiles-src');
  writeSlowService(src, opts.steps ?? 4, opts.delaySec ?? 1);
  const url = gitRepoFrom(src, path.join(root, 'slowfiles.git'), 'v1');
  const k = await initTestKeeper({ ...(opts.db ? { db: opts.db } : {}), ...(opts.mutate ? { mutate: opts.mutate } : {}) });
  const rig: Rig = {
    root, out, k, keeper: await spawnKeeper(k), souls: [],
    async create(name) {
      const r = await api(k, 'POST', '/v1/incarnations', { name, service: 'slowfiles', covens: [...new Set((opts.covens ?? [['web']]).flat())], input: { root: out } });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      return r.body.apply_id as string;
    },
    async report(name, applyId) { return (await api(k, 'GET', `/v1/incarnations/${name}/runs/${applyId}`)).body; },
    async restartKeeper() {
      if (rig.keeper.child.exitCode === null && rig.keeper.child.signalCode === null) { rig.keeper.child.kill('SIGTERM'); await rig.keeper.exited; }
      rig.keeper = await spawnKeeper(k);
    },
    check: () => checkHistory(k.db.dsn, rig.souls, out),
    async stop() {
      await Promise.all(rig.souls.map((s) => s.run.kill()));
      const c = rig.keeper.child;
      if (c.exitCode === null && c.signalCode === null) { c.kill('SIGKILL'); await rig.keeper.exited; }
      await cleanupKeeperFiles(k);
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    rig.souls = await startSouls(k, path.join(root, 'souls'), opts.covens ?? [['web'], ['web']]);
    const r = await api(k, 'POST', '/v1/services', { name: 'slowfiles', git: url, ref: 'v1' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  } catch (err) {
    (err as Error).message += `\n--- keeper log ---\n${rig.keeper.log.stderr.slice(-3000)}`;
    await rig.stop();
    throw err;
  }
  return rig;
}

/** Waits until some (not all) of the run's steps are in the souls' ledgers: the run is mid-dispatch. */
export async function midDispatch(rig: Rig, applyId: string, minSteps = 1): Promise<void> {
  await waitFor('the run to be mid-dispatch', async () => {
    const n = rig.souls.reduce((a, s) => a + new Set(ledgerLines(s, applyId).map((l) => l.index)).size, 0);
    return n >= minSteps;
  }, 60_000, 100).catch((err: Error) => { err.message += `\n--- keeper log ---\n${rig.keeper.log.stderr.slice(-3000)}`; throw err; });
}

/** Polls the incarnation (tolerating a keeper that is still coming back) until it leaves `applying`. */
export async function settledStatus(rig: Rig, name: string, timeoutMs = 120_000): Promise<any> {
  return waitFor(`${name} to settle`, async () => {
    const r = await api(rig.k, 'GET', `/v1/incarnations/${name}`);
    return r.status === 200 && r.body.status !== 'applying' ? r.body : undefined;
  }, timeoutMs, 250).catch((err: Error) => { err.message += `\n--- keeper log ---\n${rig.keeper.log.stderr.slice(-3000)}`; throw err; });
}

/**
 * The run ended: a `ready` incarnation is checked as it is; an `error_locked` one is checked, then
 * unlocked with retry by the operator and must end `ready`, checked again. Returns the first status.
 */
export async function settleAndCheck(rig: Rig, name: string): Promise<string> {
  const first = (await settledStatus(rig, name)).status as string;
  await rig.check();
  if (first === 'error_locked') {
    const r = await api(rig.k, 'POST', `/v1/incarnations/${name}/unlock`, { retry: true });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settledStatus(rig, name)).status, 'ready', 'the retried run ends ready');
    await rig.check();
  }
  return first;
}
