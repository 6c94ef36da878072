// One batch of hosts: route each host to the keeper that holds its soul's stream, send one dispatch
// activity per (keeper, chunk of hosts) on that keeper's own queue, and give hosts that moved one
// more chance after re-resolving where they are. A host nobody can reach is `unknown`, never done.
import { ActivityFailure, ApplicationFailure, TimeoutFailure, proxyActivities } from '@temporalio/workflow';
import type { DispatchActivities } from '../activities/dispatch';
import type { SharedActivities } from '../activities/shared';
import { splitBatches } from './batches';
import type { BatchOutcome, DispatchOutcome, RouteGroup, ShardInput } from '../messages';

/** Hosts per dispatch activity: bounds one activity's memory, heartbeat detail and retry cost. */
export const HOSTS_PER_ACTIVITY = 250;

/**
 * How long re-routing waits for hosts that moved (their keeper died mid-dispatch) to reconnect
 * somewhere: a soul's backoff after a keeper restart can exceed the dispatch's own grace.
 */
export const RELOCATE_WAIT_MS = 30_000;

type Shared = Pick<SharedActivities, 'resolveRoutes' | 'markUnknown'>;

function dispatcher(queue: string) {
  return proxyActivities<DispatchActivities>({
    taskQueue: queue,
    // Short: a keeper that stopped polling its queue must not hold the run; the hosts are re-resolved.
    scheduleToStartTimeout: '15s',
    startToCloseTimeout: '1h',
    // The activity heartbeats every 2s. A keeper killed mid-dispatch is failed by the keeper its souls
    // move to once its kid claim lapses (runs/failover.ts, KeeperLost, about 3 s); the heartbeat timeout
    // is the fallback when that cannot happen (the cache away). Either way the hosts are re-sent the
    // same (apply_id, host, step) keys, which the souls' ledgers answer.
    heartbeatTimeout: '10s',
    retry: { initialInterval: '1s', maximumInterval: '5s', maximumAttempts: 6 },
  });
}

/** runs/failover.ts's failure type (a workflow imports no I/O module, so the name is repeated here). */
const KEEPER_LOST = 'KeeperLost';

/**
 * The keeper running the activity died and the keeper its souls moved to failed it (runs/failover.ts):
 * its hosts are routed again at once, not retried on the dead keeper's queue.
 */
function isKeeperLost(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === KEEPER_LOST;
}

function isScheduleToStart(err: unknown): boolean {
  return (
    err instanceof ActivityFailure &&
    err.cause instanceof TimeoutFailure &&
    err.cause.timeoutType === 'SCHEDULE_TO_START'
  );
}

async function sendGroup(group: RouteGroup, input: ShardInput): Promise<DispatchOutcome> {
  const act = dispatcher(group.queue);
  const parts = await Promise.all(
    splitBatches(group.sids, HOSTS_PER_ACTIVITY).map(async (sids): Promise<DispatchOutcome> => {
      try {
        return await act.dispatchHosts({ applyId: input.applyId, sids, batch: input.batch });
      } catch (err) {
        if (isScheduleToStart(err) || isKeeperLost(err))
          return { ok: 0, changed: 0, failed: [], unknown: [], moved: sids };
        // Retries exhausted: whether steps ran is not known, so the hosts are unknown.
        return { ok: 0, changed: 0, failed: [], unknown: sids, moved: [] };
      }
    }),
  );
  return parts.reduce(
    (a, b) => ({
      ok: a.ok + b.ok,
      changed: a.changed + b.changed,
      failed: [...a.failed, ...b.failed],
      unknown: [...a.unknown, ...b.unknown],
      moved: [...a.moved, ...b.moved],
    }),
    { ok: 0, changed: 0, failed: [], unknown: [], moved: [] },
  );
}

export async function dispatchBatch(shared: Shared, input: ShardInput): Promise<BatchOutcome> {
  const total: BatchOutcome = { ok: 0, changed: 0, failed: 0, unknown: 0 };
  let pending = input.sids;
  for (let attempt = 1; attempt <= 2 && pending.length > 0; attempt++) {
    const routes = await shared.resolveRoutes({
      applyId: input.applyId,
      sids: pending,
      batch: input.batch,
      waitMs: attempt > 1 ? RELOCATE_WAIT_MS : 0,
    });
    total.unknown += routes.unknown.length;
    const results = await Promise.all(routes.groups.map((g) => sendGroup(g, input)));
    pending = [];
    for (const r of results) {
      total.ok += r.ok;
      total.changed += r.changed;
      total.failed += r.failed.length;
      total.unknown += r.unknown.length;
      pending.push(...r.moved);
    }
  }
  if (pending.length > 0) {
    await shared.markUnknown({
      applyId: input.applyId,
      sids: pending,
      reason: 'the soul moved between keepers twice during dispatch',
    });
    total.unknown += pending.length;
  }
  return total;
}
