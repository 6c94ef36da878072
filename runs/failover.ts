// Failover in seconds (issue 33, docs/reliability.md "Keeper A killed"). A dispatch activity runs
// on the queue of the keeper that holds its souls' streams (runs/worker.ts). When that keeper is
// SIGKILLed, its souls reconnect to another keeper within a second or two, but the activity was
// noticed only by its heartbeat timeout (10 s), and its Temporal retry then waited on the dead
// keeper's own queue until the schedule-to-start timeout (15 s): the run ended about 32 s after the kill.
//
// Here another keeper ends that wait. A sweep asks which other keepers list dispatch activities in
// the cache (activities/inflight.ts); it runs when a soul connects here (hub/sessions.ts
// onConnected) and once a second (SWEEP_MS), so a dead keeper is noticed when its claim lapses, not
// when the first of its souls reaches a live keeper, which under load came seconds later (issue 33).
// Each keeper found gets one watch of its kid claim (keeper/kid-claim.ts:
// renewed every 0.5 s, gone 3 s after the last renewal). A claim renewed again means that keeper
// is alive (a soul that moved away from a live keeper is handed back as moved by that keeper's own
// activity): nothing is done. A claim that is gone means the keeper is dead: every dispatch activity
// it listed is failed through Temporal's async completion client with a non-retryable `KeeperLost`
// failure naming both kids. Not a retryable one: a retry is scheduled on the dead keeper's queue
// again, where nobody polls. The workflow takes the activity's hosts as moved
// (workflows/dispatch-batch.ts), routes them again (to the keeper that holds their streams now) and
// dispatches there; the souls answer the steps already sent from their ledgers, so each runs once.
// Before the failure, the workflow's sticky queue is reset: its last workflow task may have run on
// the dead keeper, and the task the failure schedules would wait there for the sticky
// schedule-to-start timeout (10 s) before any other keeper could take it.
// Why not fail on a soul's arrival alone: a live keeper may still be sending to its other souls, and
// a second dispatch of those hosts beside it would race it. The claim is the same test a restarted
// keeper uses to take over its kid, and waiting for it costs at most its 3 s lifetime. Ended before
// its souls have reconnected, the hosts' re-routing waits for them (activities/locate-wait.ts).
// One earlier sign is taken, per dispatch: a keeper **silent** (its claim not renewed for over a
// second, SUSPECT_TTL_MS, where a live one renews every 0.5 s) whose dispatch's souls **all** hold
// leases of live keepers now. That keeper cannot reach any of those souls (a soul holds one stream),
// so there is nobody left for it to race; were it only slow, its own activity would hand the hosts
// back as moved, and the souls answer a step sent twice from their ledgers. With 20 souls the last
// one reaches B about 1 s after the kill on a quiet machine, 2 s before the claim lapses.
// The heartbeat timeout stays the fallback (the cache away).
import { ApplicationFailure } from '@temporalio/common';
import type { Logger } from '../common/logger';
import type { Cache } from '../platform/cache';
import type { Component } from '../platform/component';
import { kidClaimKey as claimKey } from '../platform/keeper-claims';
import { inflightKids, listInflight, takeInflight, type InflightEntry } from './activities/inflight';
import { presenceLocator } from './activities/presence-lookup';
import type { TemporalClientHolder } from './connection';

/** How often a watch reads the claim: a thirtieth of its 3 s lifetime, so a lapse is acted on within 0.1 s. */
const POLL_MS = 100;
/** A watch gives up after this long with the claim neither gone nor renewed (the cache away). */
const WATCH_MS = 10_000;
/**
 * The slow sweep: two reads of the cache a second per keeper (a set and a hash length per keeper
 * with dispatches), and a watch of a live keeper ends at its next renewal (0.5 s). A keeper's claim
 * lapses 2.5-3 s after its death, so a watch is under way by then.
 */
const SWEEP_MS = 1000;
/**
 * A claim with less than this left was not renewed for over a second (its lifetime is 3 s,
 * keeper/kid-claim.ts CLAIM_TTL_MS, renewed every 0.5 s): its keeper is silent, and its dispatches
 * whose souls have all moved to live keepers are ended without waiting for the lapse.
 */
const SUSPECT_TTL_MS = 2000;

export const KEEPER_LOST = 'KeeperLost';

export interface FailoverDeps {
  cache: Cache;
  temporal: TemporalClientHolder;
  kid: string;
  /** The cluster's task queue: only its keepers' dispatches are watched (activities/inflight.ts). */
  queue: string;
  log: Logger;
  sessions: { onConnected(listener: (sid: string) => void): void };
}

/** Whether `kid`'s claim is gone (true), was renewed (false), or neither was seen within `watchMs` (null). */
export async function claimLapsed(
  cache: Cache,
  kid: string,
  pollMs = POLL_MS,
  watchMs = WATCH_MS,
  whileSilent?: () => Promise<void>,
): Promise<boolean | null> {
  const deadline = Date.now() + watchMs;
  let ttl = await cache.pTTL(claimKey(kid));
  for (;;) {
    // -2: no such key. A TTL that went up: the holder renewed it since the last look.
    if (ttl === -2) return true;
    if (Date.now() >= deadline) return null;
    // Not renewed for over a second: the caller may act on other signs before the lapse.
    if (whileSilent && ttl >= 0 && ttl < SUSPECT_TTL_MS) await whileSilent();
    await new Promise((r) => setTimeout(r, pollMs));
    const next = await cache.pTTL(claimKey(kid));
    if (ttl >= 0 && next > ttl) return false;
    ttl = next;
  }
}

export function failoverComponent(
  deps: FailoverDeps,
  timing: { pollMs: number; watchMs: number; sweepMs?: number } = { pollMs: POLL_MS, watchMs: WATCH_MS },
): Component & { whenIdle(): Promise<void> } {
  const watching = new Set<string>();
  /** The sweeps and watches under way (whenIdle: tests wait for them instead of for a time). */
  const busy = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    busy.add(p);
    void p.finally(() => busy.delete(p));
  };
  let sweeping = false;
  let again = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const locate = presenceLocator(deps.cache);

  async function failAll(dead: string): Promise<void> {
    for (const e of await listInflight(deps.cache, dead)) await failOne(dead, e, 'its kid claim lapsed');
  }

  /** The silent keeper's dispatches whose souls all hold leases of live keepers other than it. */
  async function failMoved(dead: string): Promise<void> {
    for (const e of await listInflight(deps.cache, dead)) {
      if (!e.sids || e.sids.length === 0) continue;
      const kids = await locate(e.sids);
      if (kids.every((k) => k !== null && k !== dead))
        await failOne(dead, e, 'it fell silent and every soul of this dispatch reconnected to a live keeper');
    }
  }

  async function failOne(dead: string, e: InflightEntry, why: string): Promise<void> {
    const client = deps.temporal.client;
    if (!client) return;
    if (!(await takeInflight(deps.cache, dead, e.token))) return; // another keeper took it
    const message =
      `keeper ${dead} was lost during this dispatch (${why}); keeper ${deps.kid}, ` +
      'where its souls reconnect, ended it so that the hosts are routed again to the keeper that holds them now';
    try {
      // The workflow that scheduled the dispatch, and for a shard (runs over SHARD_HOSTS hosts) the
      // run's own workflow too (its id is the apply_id): the shard's end schedules a task of the run
      // workflow, which would otherwise wait on the dead keeper's sticky queue in the same way.
      const workflows = [{ workflowId: e.workflow_id, runId: e.run_id }];
      if (e.apply_id && e.apply_id !== e.workflow_id) workflows.push({ workflowId: e.apply_id, runId: '' });
      for (const execution of workflows.filter((w) => w.workflowId))
        await client.workflowService
          .resetStickyTaskQueue({ namespace: deps.temporal.namespace, execution })
          .catch((err: Error) =>
            deps.log.info('cannot reset the sticky queue', { workflow_id: execution.workflowId, error: err.message }),
          );
      await client.activity.fail(Buffer.from(e.token, 'base64'), ApplicationFailure.nonRetryable(message, KEEPER_LOST));
      // warn: an operator wants to know a keeper died under a run.
      deps.log.warn('ended a lost keeper’s dispatch; its hosts are routed again', {
        lost_kid: dead,
        apply_id: e.apply_id,
        hosts: e.hosts,
      });
    } catch (err) {
      // Already ended (its heartbeat timed out, or it finished): nothing left to end.
      deps.log.info('a lost keeper’s dispatch had already ended', {
        lost_kid: dead,
        apply_id: e.apply_id,
        error: (err as Error).message,
      });
    }
  }

  async function watch(kid: string): Promise<void> {
    try {
      const moved = () => (stopped ? Promise.resolve() : failMoved(kid));
      if ((await claimLapsed(deps.cache, kid, timing.pollMs, timing.watchMs, moved)) && !stopped) await failAll(kid);
    } catch (err) {
      deps.log.warn('failover watch failed; the dispatch heartbeat timeout will notice', {
        lost_kid: kid,
        error: (err as Error).message,
      });
    } finally {
      watching.delete(kid);
    }
  }

  /** One sweep at a time, however many souls arrive at once; arrivals during a sweep cause one more. */
  async function sweep(): Promise<void> {
    if (sweeping) {
      again = true;
      return;
    }
    sweeping = true;
    try {
      do {
        again = false;
        for (const kid of await inflightKids(deps.cache, deps.kid, deps.queue)) {
          if (stopped || watching.has(kid)) continue;
          watching.add(kid);
          track(watch(kid));
        }
      } while (again && !stopped);
    } catch (err) {
      deps.log.warn('failover sweep failed', { error: (err as Error).message });
    } finally {
      sweeping = false;
    }
  }

  // Registered now, not at start: souls may connect while this keeper's later components still start.
  deps.sessions.onConnected(() => {
    if (!stopped) track(sweep());
  });
  return {
    name: 'failover watch',
    async start() {
      timer = setInterval(() => {
        // One sweep at a time: a tick during a slow sweep (the cache slow) is dropped, not queued.
        if (!stopped && !sweeping) track(sweep());
      }, timing.sweepMs ?? SWEEP_MS);
      timer.unref();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
    },
    async whenIdle() {
      while (busy.size > 0) await Promise.all([...busy]);
    },
  };
}
