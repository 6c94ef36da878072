// One run of one operation on one incarnation = one workflow, id = apply_id. It decides; the
// activities act: render (nothing is applied if it fails) -> batches per `serial:` -> per batch,
// route hosts to the keeper holding each soul's stream and dispatch -> commit or lock.
// More hosts failed or unknown than the run's failure budget (`max_failed:`, none by default) ends
// the run `error_locked` with nothing committed, no batch started after the one that went over, and
// the workflow itself Failed (type RunFailed), so the Temporal UI lists a failed run as Failed, not
// Completed. Within the budget every batch runs and the run commits; its failed and unknown hosts
// are left pending for the incarnation (db/repos/pending-hosts.ts), for the converger to bring in.
// A scenario's `gate:` makes the run wait after each batch but the last (./gate.ts): a health check
// false at its timeout, or a cancel while waiting, ends the run `error_locked` the same way. The
// cancel is an operator's `keeper.run.cancel` signal (POST .../cancel; the run's error then starts
// "cancelled by <AID>"), or Temporal's own cancel of the workflow.
import {
  ApplicationFailure,
  CancellationScope,
  defineQuery,
  isCancellation,
  executeChild,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  type RetryPolicy,
} from '@temporalio/workflow';
import type { SharedActivities } from '../activities/shared';
import { awaitTurn } from './turn';
import { batchSize, splitBatches } from './batches';
import { dispatchBatch } from './dispatch-batch';
import { renderFailedReason } from './render-failed';
import { approveSignal, cancelReason, cancelSignal, waitAtGate } from './gate';
import type { BatchOutcome, RunProgress, RunResult, RunWorkflowInput, ShardInput } from '../messages';

/** Histories recorded before failed runs failed their workflow complete instead (replay stays exact). */
export const RUN_FAILED_PATCH = 'run-failed-fails-workflow';

/** Ends a failed run: the workflow fails with the run's result as details. */
export function failedRun<T extends { status: 'succeeded' | 'failed' }>(result: T, reason: string): T {
  if (result.status === 'failed' && patched(RUN_FAILED_PATCH))
    throw ApplicationFailure.nonRetryable(reason, 'RunFailed', result);
  return result;
}

export const runProgressQuery = defineQuery<RunProgress>('keeper.run.progress');

/** Above this many hosts a batch is split across child workflows, keeping each history small. */
export const SHARD_HOSTS = 500;

const retry: RetryPolicy = {
  initialInterval: '1s',
  maximumInterval: '10s',
  maximumAttempts: 10,
  nonRetryableErrorTypes: ['RunGone'],
};
const shared = proxyActivities<SharedActivities>({ startToCloseTimeout: '2m', heartbeatTimeout: '30s', retry });
/**
 * The short activities (routing, marking hosts, commit, lock: one Redis read or one database
 * transaction each, all idempotent) run as local activities: in the workflow's own worker, their
 * results recorded with the workflow task, without a round trip through the Temporal server's
 * matching per call (docs/performance.md). A worker that dies mid-call re-runs them on replay, which
 * their idempotence allows. Render stays a regular activity: it may clone a repository and write
 * thousands of plans. Histories recorded before this patch keep regular activities.
 */
export const LOCAL_SHORT_ACTIVITIES_PATCH = 'short-activities-local';
const local = proxyLocalActivities<SharedActivities>({ startToCloseTimeout: '1m', retry, localRetryThreshold: '10s' });

/** The proxy for short activities: local ones unless the history predates the patch. */
function shortActivities(): SharedActivities {
  return patched(LOCAL_SHORT_ACTIVITIES_PATCH) ? local : shared;
}

function add(a: BatchOutcome, b: BatchOutcome): BatchOutcome {
  return {
    ok: a.ok + b.ok,
    changed: a.changed + b.changed,
    failed: a.failed + b.failed,
    unknown: a.unknown + b.unknown,
  };
}

export async function incarnationRun(input: RunWorkflowInput): Promise<RunResult> {
  const { applyId } = input;
  const progress: RunProgress = {
    phase: 'render',
    batch: 0,
    batches: 0,
    hosts: { ok: 0, changed: 0, failed: 0, unknown: 0 },
  };
  setHandler(runProgressQuery, () => progress);
  let approved = 0;
  setHandler(approveSignal, ({ batch }) => {
    if (batch > approved) approved = batch;
  });
  // The first operator to cancel is the one named; the run stops at its gate, or before its next
  // batch when an approval reached it first.
  let cancelledBy: string | null = null;
  setHandler(cancelSignal, ({ by }) => {
    if (cancelledBy === null) cancelledBy = by;
  });

  const short = shortActivities();
  // Recorded behind a converge run (db/repos/run-queue.ts): its end passes the lock to this run, or
  // fails this run when it locked the incarnation. Only such runs have `waitsFor` (replay unchanged).
  if (input.waitsFor) {
    progress.phase = 'wait';
    if ((await awaitTurn(applyId)) === 'ended') {
      progress.phase = 'done';
      return failedRun<RunResult>(
        { applyId, status: 'failed', phase: 'wait', hosts: { ...progress.hosts, skipped: 0 } },
        `converge run ${input.waitsFor}, which this run waited for, did not leave the incarnation ready; nothing was run`,
      );
    }
    // A plan applied behind the converge run: checked again against what that run did, before
    // anything is rendered or sent; a stale one ends the run refused (db/repos/plan-recheck.ts).
    const stale = input.planId ? await short.recheckWaitedPlan({ applyId }) : null;
    if (stale !== null) {
      progress.phase = 'done';
      return failedRun<RunResult>(
        { applyId, status: 'failed', phase: 'wait', hosts: { ...progress.hosts, skipped: 0 } },
        stale,
      );
    }
    progress.phase = 'render';
  }
  const render = await shared.renderRun({ applyId });
  if (!render.ok) {
    const reason = renderFailedReason(render, '; nothing was applied');
    await short.lockRun({ applyId, reason, phase: 'render' });
    progress.phase = 'done';
    return failedRun<RunResult>(
      { applyId, status: 'failed', phase: 'render', hosts: { ...progress.hosts, skipped: 0 } },
      reason,
    );
  }

  // The engine's batches; runs recorded before render returned them are cut here the same way.
  const batches = render.batches ?? splitBatches(render.sids, batchSize(render.sids.length, render.serial));
  progress.phase = 'dispatch';
  progress.batches = batches.length;
  // Runs rendered before the budget existed have none: any failed or unknown host stops them.
  const budget = render.budget ?? { maxFailed: 0, countUnknown: true };
  const spent = (h: BatchOutcome) => h.failed + (budget.countUnknown ? h.unknown : 0);
  let dispatched = 0;
  // Why a gate stopped the rollout (its health check, or a cancel while waiting), if one did.
  let gateStop: string | null = null;
  for (const [i, sids] of batches.entries()) {
    if (i > 0 && cancelledBy !== null) {
      gateStop = cancelReason(cancelledBy, 'approval', i);
      break;
    }
    progress.batch = i + 1;
    const outcome =
      sids.length > SHARD_HOSTS
        ? (
            await Promise.all(
              splitBatches(sids, SHARD_HOSTS).map((shard, s) =>
                executeChild(dispatchShard, {
                  workflowId: `${applyId}-b${i + 1}-s${s + 1}`,
                  args: [{ applyId, sids: shard, batch: i + 1 }],
                }),
              ),
            )
          ).reduce(add)
        : await dispatchBatch(short, { applyId, sids, batch: i + 1 });
    progress.hosts = add(progress.hosts, outcome);
    dispatched += sids.length;
    if (spent(progress.hosts) > budget.maxFailed) break;
    if (render.gate && i < batches.length - 1) {
      try {
        gateStop = await waitAtGate(short, {
          applyId,
          gate: render.gate,
          batch: i + 1,
          sids,
          progress,
          approved: () => approved,
          cancelledBy: () => cancelledBy,
        });
      } catch (err) {
        // A cancel (Temporal's cancel of the workflow) while waiting ends the run cleanly: nothing
        // more is dispatched, the hosts done so far stay recorded, the run locks with the reason.
        if (!isCancellation(err)) throw err;
        const what = progress.waiting?.for === 'health' ? 'its health check' : 'approval';
        gateStop = `the run was cancelled while waiting for ${what} after batch ${i + 1}`;
      }
      if (gateStop !== null) break;
    }
  }

  const skipped = render.sids.length - dispatched;
  if (gateStop !== null) {
    const stop = gateStop;
    // The closing activities run even when the workflow was cancelled at the gate.
    return CancellationScope.nonCancellable(async () => {
      progress.phase = 'commit';
      delete progress.waiting;
      await short.setWaiting({ applyId, waiting: null });
      if (skipped > 0)
        await short.markSkipped({ applyId, sids: render.sids.slice(dispatched), reason: `${stop}; not dispatched` });
      const hosts = { ...progress.hosts, skipped };
      const reason = `${stop}; the next batch was not started and nothing was committed`;
      await short.lockRun({ applyId, reason, phase: 'gate' });
      progress.phase = 'done';
      return failedRun<RunResult>({ applyId, status: 'failed', phase: 'dispatch', hosts }, reason);
    });
  }
  if (skipped > 0) await short.markSkipped({ applyId, sids: render.sids.slice(dispatched) });
  const hosts = { ...progress.hosts, skipped };
  progress.phase = 'commit';
  if (spent(hosts) > budget.maxFailed) {
    const over = budget.maxFailed > 0 ? `, over the failure budget of ${budget.maxFailed}` : '';
    const reason = `${hosts.failed} host(s) failed, ${hosts.unknown} unknown${over}; nothing was committed`;
    await short.lockRun({ applyId, reason, phase: 'dispatch' });
    progress.phase = 'done';
    return failedRun<RunResult>({ applyId, status: 'failed', phase: 'dispatch', hosts }, reason);
  }
  const committed = await short.commitRun({ applyId });
  progress.phase = 'done';
  return failedRun<RunResult>(
    { applyId, status: committed ? 'succeeded' : 'failed', phase: 'commit', hosts },
    'the run no longer held the incarnation lock; nothing was committed',
  );
}

/** One shard of a large batch, in its own history. */
export async function dispatchShard(input: ShardInput): Promise<BatchOutcome> {
  return dispatchBatch(shortActivities(), input);
}
