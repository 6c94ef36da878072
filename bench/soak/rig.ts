// The soak's rig (bench/soak/soak.ts drives it): the keeper as its own process, restarted in the
// middle; real souls onboarded with their metrics on (and, in the forced mode, their inspector);
// hosts joining and leaving; managed files deleted so drift checks find drift; and the clean-up that
// leaves no soul, keeper or drift schedule behind on the shared stack.
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import type { Client as PgClient } from 'pg';
import type { Client as TemporalClient } from '@temporalio/client';
import { api, uniqueSid, waitFor } from '../../test/agents/harness';
import { spawnKeeper } from '../../test/runs/keeper';
import { freePort } from '../../test/support/ports';
import type { SoulProcesses, RunningSoul } from '../fleet/souls';
import { cleanupRig, onboard, stopKeeper, type SoulRig } from '../support/rig';
import { inspectFlag } from './inspector-gc';

export interface Rig extends SoulRig {
  /** The keeper's inspector port in the forced mode. */
  keeperInspect?: number;
  pg: PgClient;
  temporal: TemporalClient;
  fixed: { soul: RunningSoul; metrics: string; inspect?: number }[];
  joiner?: RunningSoul;
  restarts: number;
}

/** Writes a metrics port into an onboarded soul's config, so its heap and ledger size can be read. */
export async function withMetrics(souls: SoulProcesses, sid: string): Promise<string> {
  const file = souls.configOf(sid);
  const port = await freePort();
  const doc = yaml.load(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(file, yaml.dump({ ...doc, metrics: { port } }));
  return `http://127.0.0.1:${port}/metrics`;
}

/** Registers and onboards a soul named after `name` (made unique); its SID. */
export async function onboardNew(rig: Pick<Rig, 'k' | 'souls'>, name: string, covens: string[]): Promise<string> {
  const sid = uniqueSid(name);
  await onboard(rig, sid, covens);
  return sid;
}

export async function connected(rig: Pick<Rig, 'k'>, sid: string, soul: RunningSoul): Promise<void> {
  await waitFor(
    `${sid} connected`,
    async () => {
      if (soul.exitCode !== undefined) throw new Error(`soul run exited ${soul.exitCode}: ${soul.log()}`);
      return (await api(rig.k, 'GET', `/v1/souls/${sid}`)).body?.status === 'connected';
    },
    60_000,
    100,
  );
}

/** Waits until the incarnation is no longer applying; an incarnation that locked is unlocked (and counted). */
export async function settle(rig: Rig, name: string, counts: Record<string, number>): Promise<void> {
  const status = await waitFor(
    `${name} to settle`,
    async () => {
      const r = await api(rig.k, 'GET', `/v1/incarnations/${name}`);
      return r.status === 200 && r.body.status !== 'applying' ? (r.body.status as string) : undefined;
    },
    300_000,
    100,
  );
  if (status === 'error_locked') {
    counts.locked = (counts.locked ?? 0) + 1;
    await api(rig.k, 'POST', `/v1/incarnations/${name}/unlock`, {});
  }
}

/** The node flags of a sampled process: its inspector in the forced mode, on a port of its own. */
export async function inspectorFor(forceGc: boolean): Promise<{ port?: number; flags: string[] }> {
  if (!forceGc) return { flags: [] };
  const port = await freePort();
  return { port, flags: [inspectFlag(port)] };
}

export async function startKeeper(rig: Partial<Rig> & Pick<Rig, 'k'>, forceGc: boolean): Promise<void> {
  const inspector = await inspectorFor(forceGc);
  rig.keeper = await spawnKeeper(rig.k, undefined, inspector.flags);
  rig.keeperInspect = inspector.port;
}

export async function restartKeeper(rig: Rig, forceGc: boolean): Promise<void> {
  await stopKeeper(rig.keeper, 15_000);
  await startKeeper(rig, forceGc);
  rig.restarts += 1;
  for (const { soul } of rig.fixed) await connected(rig, soul.sid, soul);
}

export async function joinOrLeave(rig: Rig, counts: Record<string, number>): Promise<void> {
  if (rig.joiner) {
    const sid = rig.joiner.sid;
    await rig.souls.stopOne(rig.joiner);
    rig.joiner = undefined;
    const r = await api(rig.k, 'DELETE', `/v1/souls/${sid}`);
    if (r.status !== 204) throw new Error(`DELETE /v1/souls/${sid}: ${r.status} ${JSON.stringify(r.body)}`);
    counts.left = (counts.left ?? 0) + 1;
  } else {
    const sid = await onboardNew(rig, 'soakjoin', ['soak']);
    rig.joiner = rig.souls.run(sid);
    await connected(rig, sid, rig.joiner);
    counts.joined = (counts.joined ?? 0) + 1;
  }
}

/** Deletes every managed private file of `root` (all hosts): the next drift check finds drift. */
export function tamper(root: string): number {
  let n = 0;
  if (!fs.existsSync(root)) return 0;
  for (const host of fs.readdirSync(root)) {
    const f = path.join(root, host, 'private.conf');
    if (fs.existsSync(f)) {
      fs.rmSync(f);
      n++;
    }
  }
  return n;
}

export async function cleanup(rig: Partial<Rig>): Promise<void> {
  // The drift schedule lives on the shared Temporal server: delete it whatever happened.
  if (rig.temporal && rig.k) {
    await rig.temporal.schedule
      .getHandle(`keeper-drift-${rig.k.config.temporal.task_queue}-soak-drift`)
      .delete()
      .catch(() => undefined);
  }
  await cleanupRig(rig, async () => {
    await rig.pg?.end().catch(() => undefined);
    await rig.temporal?.connection.close().catch(() => undefined);
  });
}
