// The fleet benchmark's rig (bench/fleet/run.ts measures with it): one keeper as its own process
// (`bin/keeper run`, test/runs/keeper.ts: its own database, secret, queue and ports), real souls
// onboarded and started as processes (souls.ts), the keeper database's transaction counter
// (db-count.ts), a Temporal client for the workflows' own times, and the CPU clocks read around a run.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { api, endpointOf, uniqueSid, waitFor } from '../../test/agents/harness';
import { spawnKeeper, type KeeperProcess } from '../../test/runs/keeper';
import { cleanupKeeperFiles, initTestKeeper, type InitializedKeeper } from '../../test/support/keeper';
import { stackFile } from '../../test/support/stack-env';
import { connectStackTemporal } from '../../test/support/temporal-client';
import { pool } from '../pool';
import { DbCounter } from './db-count';
import { cpuTimes, pidsNamed, sumCpu } from './proc';
import { SoulProcesses, type RunningSoul } from './souls';
import { median } from './timeline';

export const ONBOARD_CONCURRENCY = 4; // `soul init` is a node start-up: more at once only queue on 2 cores
export const round = (x: number, d = 2) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const progress = (line: string) => process.stderr.write(`fleet: ${line}\n`);
export const stats = (xs: number[], d = 0) => ({ median: round(median(xs), d), max: round(Math.max(...xs), d) });

export interface Rig {
  k: InitializedKeeper;
  keeper: KeeperProcess;
  souls: SoulProcesses;
  db: DbCounter;
  temporal: Client;
  root: string;
  temporalPid: number | null;
}

/** CPU seconds of everything a run makes work, read before and after it. */
export function cpuNow(rig: Rig) {
  const keeper = cpuTimes(rig.keeper.child.pid!);
  const souls = sumCpu(rig.souls.pids());
  const pg = sumCpu(pidsNamed('postgres')); // backends that exited are in the postmaster's children
  return {
    keeper: keeper.self,
    keeperChildren: keeper.children,
    souls: souls.self,
    soulsChildren: souls.children,
    temporal: rig.temporalPid === null ? NaN : cpuTimes(rig.temporalPid).self,
    postgres: pg.self + pg.children,
  };
}

/**
 * Starts the keeper, the souls' home, the database counter and the Temporal client into `rig`, one
 * by one, so that a clean-up during the start finds what was started.
 */
export async function startRig(rig: Partial<Rig> & { root: string }): Promise<Rig> {
  // The shipped reaper but a 15 s lease (the shipped one is 3.5 s): on a fleet every soul has its own
  // machine, here 100 souls share two cores with the keeper, and in a run's first burst a soul
  // waits seconds for a core, misses its heartbeats and is closed as silent (measured: 43 of 100).
  // The benchmark measures runs, not presence (bench/presence and test/faults do). Warnings kept
  // for the log tail of a failure.
  rig.k = await initTestKeeper({
    mutate: (doc) => {
      doc.reaper = { lease_ttl: '15s' };
      doc.logging = { level: 'warn' };
    },
  });
  rig.keeper = await spawnKeeper(rig.k);
  rig.souls = new SoulProcesses(path.join(rig.root, 'souls'), endpointOf(rig.k));
  rig.db = await DbCounter.open(rig.k.db.dsn);
  rig.temporal = new Client({ connection: await connectStackTemporal(), namespace: 'default' });
  const pidFile = stackFile('temporal.pid');
  rig.temporalPid = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8').trim()) : null;
  return rig as Rig;
}

/** Polls GET /v1/souls/{sid} every 10 ms: ms from `soul run` spawn until the registry shows it connected. */
export async function registryConnected(rig: Rig, soul: RunningSoul): Promise<number> {
  await waitFor(
    `${soul.sid} connected`,
    async () => {
      if (soul.exitCode !== undefined) throw new Error(`soul run exited ${soul.exitCode}`);
      return (await api(rig.k, 'GET', `/v1/souls/${soul.sid}`)).body?.status === 'connected';
    },
    30_000,
    10,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n--- soul log ---\n${soul.log()}`);
  });
  return Date.now() - soul.spawnedAt;
}

/** Registers, onboards and starts souls [from, to) with the covens of every size they belong to. */
export async function grow(rig: Rig, from: number, to: number, sizes: number[]): Promise<RunningSoul[]> {
  const started: RunningSoul[] = [];
  let done = from;
  await pool(
    Array.from({ length: to - from }, (_, i) => from + i),
    ONBOARD_CONCURRENCY,
    async (i) => {
      const sid = uniqueSid(`fleet${i + 1}`);
      const r = await api(rig.k, 'POST', '/v1/souls', {
        sid,
        transport: 'agent',
        covens: sizes.filter((n) => i < n).map((n) => `n${n}`),
      });
      if (r.status !== 201) throw new Error(`POST /v1/souls: ${r.status} ${JSON.stringify(r.body)}`);
      await rig.souls.init(sid, r.body.bootstrap_token as string);
      started.push(rig.souls.run(sid));
      progress(`onboarding ${++done}/${to}`);
    },
  );
  return started;
}

export async function connectedCount(rig: Rig, coven: string): Promise<number> {
  const r = await api(rig.k, 'GET', `/v1/souls?coven=${coven}&counts=true&limit=1`);
  return (r.body?.counts?.connected as number | undefined) ?? 0;
}

/** Stops the souls and the keeper and removes its database, secret and files: what `rig` holds so far. */
export async function cleanup(rig: Partial<Rig>): Promise<void> {
  await rig.souls?.stop().catch(() => undefined);
  if (rig.keeper) {
    rig.keeper.child.kill('SIGTERM');
    const killer = setTimeout(() => rig.keeper?.child.kill('SIGKILL'), 10_000);
    await rig.keeper.exited;
    clearTimeout(killer);
  }
  await rig.db?.close();
  await rig.temporal?.connection.close().catch(() => undefined);
  if (rig.k) await cleanupKeeperFiles(rig.k).catch(() => undefined);
  if (rig.root) fs.rmSync(rig.root, { recursive: true, force: true });
}
