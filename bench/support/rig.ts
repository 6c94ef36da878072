// What the real-soul benchmarks' rigs share (bench/fleet, bench/exec, bench/soak): a keeper set up
// with the benchmarks' presence lease, souls registered and onboarded, a fleet grown size by size,
// the guard that no soul outlives the benchmark, and the clean-up that leaves no soul, keeper,
// database, secret or file behind on the shared stack.
import fs from 'node:fs';
import { api, uniqueSid } from '../../test/agents/harness';
import type { KeeperProcess } from '../../test/runs/keeper';
import { cleanupKeeperFiles, initTestKeeper, type InitializedKeeper } from '../../test/support/keeper';
import type { RunningSoul, SoulProcesses } from '../fleet/souls';
import { pool } from '../pool';

export const ONBOARD_CONCURRENCY = 4; // `soul init` is a node start-up: more at once only queue on 2 cores

/** What the shared clean-up stops and removes; a rig holds whatever has been started so far. */
export interface SoulRig {
  k: InitializedKeeper;
  keeper: KeeperProcess;
  souls: SoulProcesses;
  root: string;
}

/** The sizes given on the command line (whole numbers above 0), once each and smallest first, else `defaults`. */
export function sizesFromArgs(defaults: number[]): number[] {
  const sizes = [
    ...new Set(
      process.argv
        .slice(2)
        .map(Number)
        .filter((x) => Number.isInteger(x) && x > 0),
    ),
  ].sort((a, b) => a - b);
  return sizes.length ? sizes : defaults;
}

/**
 * A test keeper with the shipped reaper but a 15 s lease (the shipped one is 3.5 s): on a fleet every
 * soul has its own machine, here up to 100 souls share two cores with the keeper, and in a run's first
 * burst a soul waits seconds for a core, misses its heartbeats and is closed as silent (measured in
 * bench/fleet: 43 of 100). The benchmarks measure runs, not presence (bench/presence and test/faults
 * do). Warnings kept for the log tail of a failure.
 */
export function initBenchKeeper(): Promise<InitializedKeeper> {
  return initTestKeeper({
    mutate: (doc) => {
      doc.reaper = { lease_ttl: '15s' };
      doc.logging = { level: 'warn' };
    },
  });
}

/** Registers `sid` with `covens` and onboards it (`soul init` with its bootstrap token); not started. */
export async function onboard(rig: Pick<SoulRig, 'k' | 'souls'>, sid: string, covens: string[]): Promise<void> {
  const r = await api(rig.k, 'POST', '/v1/souls', { sid, transport: 'agent', covens });
  if (r.status !== 201) throw new Error(`POST /v1/souls: ${r.status} ${JSON.stringify(r.body)}`);
  await rig.souls.init(sid, r.body.bootstrap_token as string);
}

/**
 * Registers, onboards and starts souls [from, to), named `<name><i+1>`, with coven `n<N>` of every
 * size N they belong to: a run of size N targets exactly N souls, and no earlier coven grows.
 */
export async function grow(
  rig: Pick<SoulRig, 'k' | 'souls'>,
  range: { from: number; to: number; sizes: number[] },
  name: string,
  progress: (line: string) => void,
): Promise<RunningSoul[]> {
  const { from, to, sizes } = range;
  const started: RunningSoul[] = [];
  let done = from;
  await pool(
    Array.from({ length: to - from }, (_, i) => from + i),
    ONBOARD_CONCURRENCY,
    async (i) => {
      const sid = uniqueSid(`${name}${i + 1}`);
      await onboard(
        rig,
        sid,
        sizes.filter((n) => i < n).map((n) => `n${n}`),
      );
      started.push(rig.souls.run(sid));
      progress(`onboarding ${++done}/${to}`);
    },
  );
  return started;
}

/** How many souls of `coven` the registry shows connected. */
export async function connectedCount(rig: Pick<SoulRig, 'k'>, coven: string): Promise<number> {
  const r = await api(rig.k, 'GET', `/v1/souls?coven=${coven}&counts=true&limit=1`);
  return (r.body?.counts?.connected as number | undefined) ?? 0;
}

/** SIGTERM, and SIGKILL if the keeper has not exited after `graceMs`. */
export async function stopKeeper(keeper: KeeperProcess, graceMs: number): Promise<void> {
  keeper.child.kill('SIGTERM');
  const killer = setTimeout(() => keeper.child.kill('SIGKILL'), graceMs);
  await keeper.exited;
  clearTimeout(killer);
}

/**
 * Stops the souls and the keeper, then `closeClients` (what the benchmark opened on the keeper's
 * database or Temporal), then removes the keeper's database, secret and files and the rig's root.
 */
export async function cleanupRig(rig: Partial<SoulRig>, closeClients?: () => Promise<void>): Promise<void> {
  await rig.souls?.stop().catch(() => undefined);
  if (rig.keeper) await stopKeeper(rig.keeper, 10_000);
  await closeClients?.();
  if (rig.k) await cleanupKeeperFiles(rig.k).catch(() => undefined);
  if (rig.root) fs.rmSync(rig.root, { recursive: true, force: true });
}

/**
 * Whatever ends this process, no soul is left running: the souls' groups and the keeper are killed
 * synchronously on exit, and SIGINT/SIGTERM first get the orderly `cleanup` and then exit 130.
 * `finish` (in the benchmark's finally) runs that clean-up unless a signal already has, and waits
 * for it (main must not exit first), then drops the handlers.
 */
export function guardRig(
  rig: Partial<SoulRig>,
  cleanup: () => Promise<void>,
  progress: (line: string) => void,
): { finish: () => Promise<void> } {
  let interrupted: Promise<void> | undefined;
  const onExit = () => {
    rig.souls?.killNow();
    rig.keeper?.child.kill('SIGKILL');
  };
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) process.exit(130);
    progress(`${sig}: cleaning up`);
    interrupted = cleanup().finally(() => process.exit(130));
  };
  process.on('exit', onExit);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    finish: async () => {
      await (interrupted ?? cleanup());
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.off('exit', onExit);
    },
  };
}
