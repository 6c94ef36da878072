// New hosts converge (issue 17, item 5; issue 30). A soul onboarded into a coven gets what the coven's
// `ready` incarnations already put on their other hosts: for each of them, one run of its last
// committed operation, with its last committed input, on every new soul and every host it left
// pending that came back (`target_sids`), gathered while more are on their way
// (runs/converge-gather.ts), as a normal run with its own report and history, `serial:` and failure
// budget. Incarnations of other covens are untouched.
//
// Why a poll of the registry and not a hook in onboarding: an agent soul is onboarded before its
// stream is up, and a run started then would find it silent and lock the incarnation; the registry
// says when it is connected, whichever keeper holds its stream. Every keeper runs this loop; two
// keepers cannot both start a run for the same soul and incarnation, because starting takes the
// incarnation's lock (ready -> applying) and a converge run that exists is found by the next look.
//
// Per soul and incarnation: a converge run exists, or the soul was a host of the last committed run
// -> done; `ready` with a committed run -> start one;
// `applying` -> done when the soul is a host of the run in flight (committed, that run was applied to
// it; failed, the incarnation is error_locked, below), else look again next time; `error_locked` or
// never committed -> done (its unlock-with-retry, or its next run, renders every host of the covens,
// the new one included). A soul is marked converged when every incarnation of its covens is done.
//
// The same loop ends runs whose workflow was closed outside the keeper (terminated, timed out,
// cancelled, failed in Temporal: runs/run-watch.ts), every RUN_WATCH_EVERY_MS: such a run is
// locked with what Temporal says happened instead of staying `applying`.
import type { Knex } from 'knex';
import type { Logger } from '../common/logger';
import { getIncarnation } from '../db/repos/incarnations';
import {
  alreadyReached,
  convergeCandidates,
  convergeRunExists,
  hostsOnTheWay,
  incarnationsToConverge,
  isHostOfRun,
  markConverged,
  type CovenIncarnation,
} from '../db/repos/convergence';
import { incarnationsWithReturnedHosts, returnedPendingHosts } from '../db/repos/pending-hosts';
import { getRun } from '../db/repos/runs';
import type { Component } from '../platform/component';
import { Gathering } from './converge-gather';
import { closeOrphanedExecutions } from './execution-orphans';
import { endOrphanedRuns } from './run-watch';
import type { RunService } from './start/service';

/** What the loop needs: the database it reads, the run service it starts runs with (which holds the Temporal client). */
export interface ConvergeDeps {
  db: Knex;
  runs: Pick<RunService, 'converge' | 'temporal'>;
}

/** How often the registry is read for souls to converge: "within seconds" of a soul connecting. */
export const CONVERGE_EVERY_MS = 1000;
/** Souls handled per look; the rest wait for the next one. */
const SOULS_PER_LOOK = 200;

/**
 * One incarnation and the new souls of its covens: the souls it still has to reach, with its pending
 * hosts that came back (db/repos/pending-hosts.ts), go in one run (issue 30), cut by `serial:` and
 * held to the failure budget like any run. Returns the souls to look at again next time.
 */
async function convergeHosts(
  deps: ConvergeDeps,
  inc: CovenIncarnation,
  sids: string[],
  kid: string,
  log: Logger,
  gather: Gathering,
  gathering: Set<string>,
): Promise<string[]> {
  const db = deps.db;
  if (inc.status === 'applying') {
    // Without this, every soul of a large run that onboarded shortly before it is looked at again
    // every second for as long as the run lasts (bench/fanout: 600 queries a second beside the run).
    const wait: string[] = [];
    for (const sid of sids) {
      if (inc.current_apply_id && (await isHostOfRun(db, inc.current_apply_id, sid))) continue;
      if (!(await convergeRunExists(db, inc.name, sid))) wait.push(sid);
    }
    return wait;
  }
  if (inc.status !== 'ready' || inc.last_committed_apply_id === null) return [];
  // Already applied to them: they connected before the last committed run rendered.
  const reached = await alreadyReached(db, inc.name, inc.last_committed_apply_id, sids);
  const targets = [
    ...new Set([...sids.filter((sid) => !reached.has(sid)), ...(await returnedPendingHosts(db, inc.name))]),
  ];
  if (targets.length === 0) return [];
  const last = await getRun(db, inc.last_committed_apply_id);
  if (!last) return [];
  // An upgrade changes state, not hosts: the operation to repeat is the last one that applied steps.
  if (last.operation === 'upgrade') {
    log.info('converge: the last committed run is an upgrade; the next run of the incarnation will include the hosts', {
      sids: targets,
      incarnation: inc.name,
    });
    return [];
  }
  // Hosts coming back together go in one run: while more are on their way, wait until no more have
  // joined for a moment.
  if (!gather.ready(inc.name, targets, await hostsOnTheWay(db, inc.name), Date.now())) {
    gathering.add(inc.name);
    return sids;
  }
  const outcome = await deps.runs.converge({
    incarnation: inc.name,
    service: inc.service,
    serviceVersion: inc.service_version,
    operation: last.operation,
    input: last.input,
    sids: targets,
    by: `keeper:${kid}`,
  });
  if (!outcome.accepted) {
    // Another run took the lock first: look again. Anything else is said, and looked at again too.
    if (outcome.kind !== 'conflict')
      log.warn('converge: could not start a run for new hosts; will try again', {
        sids: targets,
        incarnation: inc.name,
        error: outcome.reason,
      });
    return sids;
  }
  log.info('converge: started a run on new hosts', {
    hosts: targets.length,
    incarnation: inc.name,
    apply_id: outcome.applyId,
    operation: last.operation,
  });
  return [];
}

export async function convergeNewSouls(deps: ConvergeDeps, kid: string, log: Logger, gather: Gathering): Promise<void> {
  const db = deps.db;
  const gathering = new Set<string>();
  const souls = await convergeCandidates(db, SOULS_PER_LOOK);
  const wait = new Set<string>();
  for (const { inc, sids } of await incarnationsToConverge(
    db,
    souls,
    await incarnationsWithReturnedHosts(db, SOULS_PER_LOOK),
  )) {
    try {
      // Re-read: a run started by another keeper may have taken the lock.
      const fresh = await getIncarnation(db, inc.name);
      if (!fresh) continue;
      const now = {
        ...inc,
        status: fresh.status,
        last_committed_apply_id: fresh.last_committed_apply_id,
        current_apply_id: fresh.current_apply_id,
      };
      for (const sid of await convergeHosts(deps, now, sids, kid, log, gather, gathering)) wait.add(sid);
    } catch (err) {
      for (const sid of sids) wait.add(sid);
      log.warn('converge: could not start a run for new hosts; will try again', {
        incarnation: inc.name,
        error: (err as Error).message,
      });
    }
  }
  gather.keepOnly(gathering);
  // A soul is converged when every incarnation of its covens is done with it.
  for (const soul of souls) if (!wait.has(soul.sid)) await markConverged(db, soul.sid);
}

/** How often running runs are checked against their workflows: "within seconds" of a terminate. */
export const RUN_WATCH_EVERY_MS = 2000;

/** Locks the runs whose workflow closed outside the keeper (runs/run-watch.ts) and closes such executions (runs/execution-orphans.ts). */
export async function watchRuns(deps: ConvergeDeps, log: Logger): Promise<void> {
  const temporal = deps.runs.temporal;
  if (!temporal?.client) return;
  for (const applyId of await endOrphanedRuns(deps.db, temporal.client, temporal.namespace)) {
    log.warn("run watch: the run's workflow closed outside the keeper; the run is locked", { apply_id: applyId });
  }
  for (const id of await closeOrphanedExecutions(deps.db, temporal.client)) {
    log.warn("run watch: the execution's workflow is gone; its unanswered hosts are unknown", { execution: id });
  }
}

/** The loop every keeper runs beside its API. */
export function convergeComponent(deps: ConvergeDeps, kid: string, log: Logger): Component {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  let watched = 0;
  const gather = new Gathering();
  const watch = async () => {
    if (Date.now() - watched < RUN_WATCH_EVERY_MS) return;
    watched = Date.now();
    await watchRuns(deps, log).catch((err: Error) =>
      log.warn('run watch: asking Temporal about running runs failed; will try again', { error: err.message }),
    );
  };
  const look = () => {
    running = convergeNewSouls(deps, kid, log, gather)
      .catch((err: Error) => log.warn('converge: reading the registry failed; will try again', { error: err.message }))
      .then(watch)
      .finally(() => {
        if (!stopped) timer = setTimeout(look, CONVERGE_EVERY_MS);
      });
  };
  return {
    name: 'converge new hosts',
    async start() {
      timer = setTimeout(look, CONVERGE_EVERY_MS);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
