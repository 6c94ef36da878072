// The fleet benchmark's rig (bench/fleet/run.ts measures with it): one keeper as its own process
// (`bin/keeper run`, test/runs/keeper.ts: its own database, secret, queue and ports), real souls
// onboarded and started as processes (souls.ts), the keeper database's transaction counter
// (db-count.ts), a Temporal client for the workflows' own times, and the CPU clocks read around a run.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { api, endpointOf, waitFor } from '../../test/agents/harness';
import { spawnKeeper } from '../../test/runs/keeper';
import { stackFile } from '../../test/support/stack-env';
import { connectStackTemporal } from '../../test/support/temporal-client';
import { cleanupRig, initBenchKeeper, type SoulRig } from '../support/rig';
import { DbCounter } from './db-count';
import { cpuTimes, pidsNamed, sumCpu } from './proc';
import { SoulProcesses, type RunningSoul } from './souls';
import { median } from './timeline';

export const round = (x: number, d = 2) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const progress = (line: string) => process.stderr.write(`fleet: ${line}\n`);
export const stats = (xs: number[], d = 0) => ({ median: round(median(xs), d), max: round(Math.max(...xs), d) });

export interface Rig extends SoulRig {
  db: DbCounter;
  temporal: Client;
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
  rig.k = await initBenchKeeper(); // its 15 s lease: 100 souls share two cores here
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

/** Stops the souls and the keeper and removes its database, secret and files: what `rig` holds so far. */
export async function cleanup(rig: Partial<Rig>): Promise<void> {
  await cleanupRig(rig, async () => {
    await rig.db?.close();
    await rig.temporal?.connection.close().catch(() => undefined);
  });
}
