// A keeper for the run tests: test/support's keeper (own database, secret, queue, ports) started
// (optionally with a replaced scenario engine), plus souls (real `bin/soul` processes in their own UTS
// namespaces) registered in given covens, onboarded and connected.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ScenarioPort } from '../../runs/activities/scenario-port';
import {
  cleanupKeeperFiles,
  initTestKeeper,
  startTestKeeper,
  type InitializedKeeper,
  type TestKeeper,
} from '../support/keeper';
import { repoRoot } from '../support/repo';
import {
  api,
  endpointOf,
  soulInit,
  soulRun,
  uniqueSid,
  waitFor,
  waitForStatus,
  writeSoulConfig,
  type KeeperAccess,
  type RunningSoul,
} from '../agents/harness';

/** A keeper's files, database and secret with its first operator (`admin`) created, not started. */
export const initRunKeeper = (): Promise<InitializedKeeper> => initTestKeeper();

export async function startRunKeeper(scenario?: ScenarioPort): Promise<TestKeeper> {
  return startTestKeeper(scenario ? { scenario } : {});
}

/** `bin/keeper run` as its own process (so it can really be SIGKILLed), once /readyz answers. */
export interface KeeperProcess {
  child: ChildProcess;
  log: { stderr: string };
  exited: Promise<number | null>;
}

export async function spawnKeeper(
  k: KeeperAccess & { configFile: string },
  timeoutMs = 60_000,
  /** Flags for node itself (the soak's `--inspect=...`), before the launcher. */
  nodeFlags: string[] = [],
): Promise<KeeperProcess> {
  const child = spawn(
    process.execPath,
    [...nodeFlags, path.join(repoRoot(), 'bin', 'keeper'), 'run', `--config=${k.configFile}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const log = { stderr: '' };
  // Keep only the tail: a failing test shows it, and a long run cannot grow it without bound.
  const keep = (d: Buffer) => {
    log.stderr = (log.stderr + d.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  try {
    await waitFor(
      'the keeper to be ready',
      async () => {
        if (gone) throw new Error('the keeper exited');
        return (await fetch(`${k.baseUrl}/readyz`)).ok;
      },
      timeoutMs,
      200,
    );
  } catch (err) {
    child.kill('SIGKILL');
    (err as Error).message += `\n--- keeper log ---\n${log.stderr.slice(-3000)}`;
    throw err;
  }
  return { child, log, exited };
}

export interface TestSoul {
  sid: string;
  config: string;
  dir: string;
  run: RunningSoul;
}

/** Registers, onboards and connects one soul per entry of `covens`. */
export async function startSouls(k: KeeperAccess, root: string, covens: string[][]): Promise<TestSoul[]> {
  return Promise.all(
    covens.map(async (c, i) => {
      const sid = uniqueSid(`host${i + 1}`);
      const r = await api(k, 'POST', '/v1/souls', { sid, transport: 'agent', covens: c });
      if (r.status !== 201) throw new Error(`POST /v1/souls: ${r.status} ${JSON.stringify(r.body)}`);
      const dir = path.join(root, sid);
      const config = writeSoulConfig(dir, sid, [endpointOf(k)]);
      const init = await soulInit(sid, config, r.body.bootstrap_token);
      if (init.code !== 0) throw new Error(`soul init ${sid}: ${init.stderr}`);
      const run = soulRun(sid, config);
      await waitForStatus(k, sid, 'connected', 20_000);
      return { sid, config, dir, run };
    }),
  );
}

/** What a run suite started: its souls, its keeper (in-process, or files only beside a spawned one), its folder. */
export interface RunRig {
  souls?: TestSoul[] | undefined;
  k?: TestKeeper | InitializedKeeper | undefined;
  /** The keeper's own process (spawnKeeper), when the suite runs it as one. */
  keeper?: KeeperProcess | undefined;
  root?: string | undefined;
}

/**
 * The run suites' teardown, for their `after`: the souls killed first (so none reconnects to a
 * keeper going away), then the keeper (a spawned one SIGTERMed and waited for, unless a test already
 * ended it; its database, secret and files removed), then the suite's folder. Whatever a failed
 * `before` did not start is skipped.
 */
export async function stopRunRig(rig: RunRig): Promise<void> {
  await Promise.all((rig.souls ?? []).map((s) => s.run.kill()));
  const { keeper, k } = rig;
  if (keeper && keeper.child.exitCode === null && keeper.child.signalCode === null) {
    keeper.child.kill('SIGTERM');
    await keeper.exited;
  }
  if (k && 'stop' in k) await k.stop();
  else if (k) await cleanupKeeperFiles(k);
  if (rig.root) fs.rmSync(rig.root, { recursive: true, force: true });
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Polls the incarnation until it leaves `applying`; returns its record. */
export async function settled(k: KeeperAccess, name: string, timeoutMs = 60_000): Promise<any> {
  return waitFor(
    `${name} to settle`,
    async () => {
      const r = await api(k, 'GET', `/v1/incarnations/${name}`);
      return r.status === 200 && r.body.status !== 'applying' ? r.body : undefined;
    },
    timeoutMs,
    200,
  );
}

export { api, waitFor };

/** Copies a service directory into a new local git repository tagged `tag`; returns its file:// URL. */
export function gitRepoFrom(src: string, dir: string, tag: string): string {
  fs.cpSync(src, dir, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@keeper.test', ...args], {
      cwd: dir,
      stdio: 'pipe',
    });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', path.basename(src));
  git('tag', tag);
  return `file://${dir}`;
}

/** The lifecycle service's next version in its test repository, tagged v3: state_schema_version 3 and its two migrations. */
export function commitVersion3(repo: string): void {
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@keeper.test', ...args], {
      cwd: repo,
      stdio: 'pipe',
    });
  fs.cpSync(
    path.join(repoRoot(), 'test', 'fixtures', 'services', 'lifecycle.v3', 'migrations'),
    path.join(repo, 'migrations'),
    { recursive: true },
  );
  const yml = path.join(repo, 'service.yml');
  fs.writeFileSync(yml, fs.readFileSync(yml, 'utf8').replace('state_schema_version: 1', 'state_schema_version: 3'));
  git('add', '-A');
  git('commit', '-q', '-m', 'state_schema_version 3');
  git('tag', 'v3');
}
