// A one-off execution (issue 34, docs/executions.md) as a durable workflow of its own: batches of
// hosts, each routed to the keeper holding its soul's stream and sent on that keeper's queue; hosts
// that moved get one more routing; at the end every host without an answer is `unknown`. It takes
// no incarnation lock and commits no state. A keeper restart loses nothing: the workflow resumes and
// a retried dispatch re-sends the same ledger keys, which the souls answer from their ledgers.
import { ActivityFailure, TimeoutFailure, proxyActivities } from '@temporalio/workflow';
import type { ExecutionDispatchActivities, ExecutionSharedActivities } from '../activities/execute';
import { splitBatches } from './batches';
import { RELOCATE_WAIT_MS } from './dispatch-batch';

export interface ExecutionInput {
  executionId: string;
  sids: string[];
  batch: number;
  timeoutMs: number;
}

const shared = proxyActivities<ExecutionSharedActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 10 },
});

function dispatcher(queue: string, timeoutMs: number) {
  return proxyActivities<ExecutionDispatchActivities>({
    taskQueue: queue,
    scheduleToStartTimeout: '15s',
    // Long enough for every host of a chunk at the per-host timeout, in waves of the activity's concurrency.
    startToCloseTimeout: Math.max(60_000, timeoutMs * 3 + 30_000),
    heartbeatTimeout: '10s',
    retry: { initialInterval: '1s', maximumInterval: '5s', maximumAttempts: 6 },
  });
}

const HOSTS_PER_ACTIVITY = 250;

function isScheduleToStart(err: unknown): boolean {
  return (
    err instanceof ActivityFailure &&
    err.cause instanceof TimeoutFailure &&
    err.cause.timeoutType === 'SCHEDULE_TO_START'
  );
}

export async function oneOffExecution(input: ExecutionInput) {
  for (const batch of splitBatches(input.sids, input.batch)) {
    let pending = batch;
    for (let attempt = 1; attempt <= 2 && pending.length > 0; attempt++) {
      const routes = await shared.routeExecution({
        executionId: input.executionId,
        sids: pending,
        waitMs: attempt > 1 ? RELOCATE_WAIT_MS : 0,
      });
      if (routes.unknown.length > 0) {
        await shared.markExecutionUnknown({
          executionId: input.executionId,
          sids: routes.unknown,
          reason: 'the soul is not connected to any keeper',
        });
      }
      const moved = await Promise.all(
        routes.groups.flatMap((g) =>
          splitBatches(g.sids, HOSTS_PER_ACTIVITY).map(async (sids) => {
            try {
              return (await dispatcher(g.queue, input.timeoutMs).executeHosts({ executionId: input.executionId, sids }))
                .moved;
            } catch (err) {
              if (isScheduleToStart(err)) return sids;
              // Retries exhausted: whether the module ran is not known; finishExecution marks them unknown.
              return [];
            }
          }),
        ),
      );
      pending = moved.flat();
    }
  }
  return shared.finishExecution({ executionId: input.executionId });
}
