// Activities of the shared task queue: any keeper may run them. Built by a factory so the worker
// wires the real database, cache and scenario engine, and tests the same code on the same stack.
import { Context } from '@temporalio/activity';
import { markHostsSkipped, recordHosts } from '../../db/repos/runs';
import { dispatchQueue } from '../queues';
import type { GateCheck, PlanResult, RenderOutcome, RouteGroup, Routes, RunWaiting } from '../messages';
import { checkGateHealth, recordWaiting } from './gate';
import { commitRun, DESTROY, lockRun, RunMissing } from '../../db/repos/run-outcome';
import { getIncarnation } from '../../db/repos/incarnations';
import { getRun } from '../../db/repos/runs';
import type { SharedActivityDeps } from './deps';
import { NotLockHolder, RunGone } from './errors';
import { actingExecution, fenceRun } from './fence';
import { checkRunWorkflow } from '../../db/repos/run-lock';
import { turnOf } from '../../db/repos/run-queue';
import { recheckWaitedPlan } from '../../db/repos/plan-recheck';

/** How often a waiting run looks whether the converge run before it ended (a database read). */
const TURN_POLL_MS = 250;
import { renderRun } from './render';
import { upgradeState } from './upgrade';
import { finishPlan } from '../../db/repos/plans';
import { createDriftActivities } from './drift';
import { createRetentionActivities } from './retention';
import { logRunEdge } from './run-log';
import { locateFirst, locateWaiting, RECENTLY_CONNECTED_MS } from './locate-wait';
import { recentlyConnected } from '../../db/repos/presence';

export function createSharedActivities(deps: SharedActivityDeps) {
  const { db } = deps;
  /** Every entry point first: only the run holding its incarnation's lock, and only its own workflow
   *  execution, may act (runs/activities/fence.ts); render, a run's or plan's first activity, claims it. */
  const guard = async (
    applyId: string,
    finished: 'allow' | 'refuse' = 'refuse',
    plan: 'allow' | 'refuse' = 'refuse',
    claim = false,
  ) => fenceRun(db, applyId, { finished, plan, claim });
  return {
    async renderRun({ applyId }: { applyId: string }): Promise<RenderOutcome> {
      await guard(applyId, 'refuse', 'allow', true);
      Context.current().heartbeat('rendering');
      if (Context.current().info.attempt === 1) await logRunEdge(deps, applyId, 'started');
      return renderRun(deps, applyId);
    },

    /** Groups hosts by the keeper holding their stream; hosts with no live stream after `waitMs` (first routing: see locateFirst) are `unknown`. */
    async resolveRoutes({
      applyId,
      sids,
      batch,
      waitMs = 0,
    }: {
      applyId: string;
      sids: string[];
      batch: number;
      waitMs?: number;
    }): Promise<Routes> {
      await guard(applyId, 'refuse', 'allow');
      // A re-routing waits for hosts that moved; a first routing only for souls connected moments ago.
      const kids =
        waitMs > 0
          ? await locateWaiting(deps.locate, sids, waitMs)
          : await locateFirst(deps.locate, (missing) => recentlyConnected(db, missing, RECENTLY_CONNECTED_MS), sids);
      const groups = new Map<string, RouteGroup>();
      const unknown: string[] = [];
      sids.forEach((sid, i) => {
        const kid = kids[i];
        if (!kid) {
          unknown.push(sid);
          return;
        }
        let g = groups.get(kid);
        if (!g) groups.set(kid, (g = { kid, queue: dispatchQueue(deps.taskQueue, kid), sids: [] }));
        g.sids.push(sid);
      });
      await recordHosts(
        db,
        unknown.map((sid) => ({
          sid,
          status: 'unknown',
          kid: null,
          reason: 'the soul is not connected to any keeper',
          batch,
          started_at: null,
          finished_at: null,
        })),
        applyId,
      );
      return { groups: [...groups.values()], unknown };
    },

    async markUnknown({ applyId, sids, reason }: { applyId: string; sids: string[]; reason: string }): Promise<void> {
      await guard(applyId, 'refuse', 'allow');
      await recordHosts(
        db,
        sids.map((sid) => ({
          sid,
          status: 'unknown',
          kid: null,
          reason,
          batch: null,
          started_at: null,
          finished_at: null,
        })),
        applyId,
      );
    },

    async markSkipped({ applyId, sids, reason }: { applyId: string; sids: string[]; reason?: string }): Promise<void> {
      await guard(applyId);
      await markHostsSkipped(db, applyId, sids, reason ?? 'an earlier batch failed; not dispatched');
    },

    /** One look at a gate's health check after a batch (runs/activities/gate.ts). */
    async checkGate({
      applyId,
      sids,
      health,
    }: {
      applyId: string;
      sids: string[];
      health: string;
    }): Promise<GateCheck> {
      await guard(applyId);
      return checkGateHealth(deps, { applyId, sids, health });
    },

    /** Records what the run waits for between batches, or (null) that it waits no more. */
    async setWaiting({ applyId, waiting }: { applyId: string; waiting: RunWaiting | null }): Promise<void> {
      await guard(applyId);
      await recordWaiting(db, applyId, waiting);
    },

    async commitRun({ applyId }: { applyId: string }): Promise<boolean> {
      await guard(applyId, 'allow');
      // A committed destroy removes the incarnation: its secret inputs go from the store after it.
      const run = await getRun(db, applyId);
      const ending = run?.operation === DESTROY ? await getIncarnation(db, run.incarnation) : undefined;
      const committed = await commitRun(db, applyId).catch(goneAsFailure);
      if (committed && ending && !(await getIncarnation(db, ending.name))) await deps.purgeSecretInputs?.(ending);
      await logRunEdge(deps, applyId, 'ended');
      return committed;
    },

    async lockRun({ applyId, reason, phase }: { applyId: string; reason: string; phase: string }): Promise<void> {
      await guard(applyId, 'allow');
      await lockRun(db, applyId, reason, phase).catch(goneAsFailure);
      await logRunEdge(deps, applyId, 'ended');
    },

    /** Ends a plan: ready when every host answered its check, failed otherwise. Changes no incarnation. */
    async finishPlan({ applyId, reason }: { applyId: string; reason?: string }): Promise<PlanResult> {
      await guard(applyId, 'allow', 'allow');
      const result = await finishPlan(db, applyId, reason);
      await logRunEdge(deps, applyId, 'ended');
      return result;
    },

    /**
     * A run recorded behind a converge run (db/repos/run-queue.ts) waits here until it holds the
     * lock ('go') or was failed while waiting ('ended'). The wait is this activity, heartbeating: a
     * keeper that dies mid-wait stops heartbeating and Temporal runs it again on another worker.
     */
    async awaitTurn({ applyId }: { applyId: string }): Promise<'go' | 'ended'> {
      const ctx = Context.current();
      const own = await checkRunWorkflow(db, applyId, await actingExecution(applyId), { claim: true });
      if (!own.ok) throw NotLockHolder(own.reason);
      for (;;) {
        const turn = await turnOf(db, applyId);
        if (turn !== 'wait') return turn;
        ctx.heartbeat('waiting');
        await ctx.sleep(TURN_POLL_MS);
      }
    },

    /**
     * A plan applied behind a converge run, once its turn came: null when the plan still holds, else
     * the stale plan's error, the run ended with it and the incarnation `ready` (db/repos/plan-recheck.ts).
     */
    async recheckWaitedPlan({ applyId }: { applyId: string }): Promise<string | null> {
      await guard(applyId, 'allow');
      const stale = await recheckWaitedPlan(db, applyId);
      if (stale !== null) await logRunEdge(deps, applyId, 'ended');
      return stale;
    },

    ...createDriftActivities(deps),
    ...createRetentionActivities(deps),

    async upgradeState({
      applyId,
      toVersion,
    }: {
      applyId: string;
      toVersion: number | null;
    }): Promise<{ version: number }> {
      await guard(applyId, 'refuse', 'refuse', true);
      return upgradeState(deps, applyId, toVersion);
    },
  };
}

export type SharedActivities = ReturnType<typeof createSharedActivities>;

/** A missing run row cannot come back: the workflow must not retry (RunGone is non-retryable). */
function goneAsFailure(err: unknown): never {
  throw err instanceof RunMissing ? RunGone(err.applyId) : err;
}
