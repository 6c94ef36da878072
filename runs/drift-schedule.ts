// One Temporal Schedule per incarnation with a drift check (docs/drift.md): id
// `keeper-drift-<task_queue>-<incarnation>` (two clusters sharing a Temporal namespace keep their
// own), every `interval`, starting incarnationDriftCheck on the shared queue. Overlap SKIP: a check
// still running when the next is due is not doubled; a check runs at most an hour, so one that
// cannot finish (no worker left on its queue) does not hold every later tick. Turning the check off
// deletes the schedule; changing the interval updates it in place.
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import type { TemporalClientHolder } from './connection';
import { sharedQueue } from './queues';
import { TemporalUnavailable } from './client';
import { incarnationDriftCheck } from './workflows/drift';

export const driftScheduleId = (taskQueue: string, incarnation: string) => `keeper-drift-${taskQueue}-${incarnation}`;

/** The longest one check may take; the next tick after it checks again. */
export const DRIFT_CHECK_TIMEOUT = '1h' as const;

export async function setDriftSchedule(
  holder: TemporalClientHolder,
  incarnation: string,
  interval: string | null,
): Promise<void> {
  const client = holder.client;
  if (!client) throw new TemporalUnavailable('the Temporal client is not connected');
  const id = driftScheduleId(holder.taskQueue, incarnation);
  try {
    if (interval === null) {
      await client.schedule
        .getHandle(id)
        .delete()
        .catch((err: unknown) => {
          if (!(err instanceof ScheduleNotFoundError)) throw err;
        });
      return;
    }
    const action = {
      type: 'startWorkflow' as const,
      workflowType: incarnationDriftCheck,
      taskQueue: sharedQueue(holder.taskQueue),
      workflowId: id,
      args: [{ incarnation }] as [{ incarnation: string }],
      workflowRunTimeout: DRIFT_CHECK_TIMEOUT,
    };
    const spec = { intervals: [{ every: interval as `${number}${'s' | 'm' | 'h' | 'd'}` }] };
    try {
      await client.schedule.getHandle(id).update((prev) => ({ ...prev, spec, action }));
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
      await client.schedule.create({
        scheduleId: id,
        spec,
        action,
        policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1m' },
      });
    }
  } catch (err) {
    if (err instanceof TemporalUnavailable) throw err;
    throw new TemporalUnavailable(`cannot set the drift check schedule: ${(err as Error).message}`);
  }
}
