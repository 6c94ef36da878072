// The cluster's retention schedule (docs/configuration.md "retention"): one Temporal Schedule,
// `keeper-retention-<task_queue>`, starting keeperRetention on the shared queue every
// retention.interval. Every keeper sets it at start (created, or updated in place to its own
// interval), so the last keeper started decides; overlap SKIP, so a long prune is never doubled.
// A keeper that starts while Temporal is away sets it once it connects; one that cannot set it
// logs it and runs on: the schedule set by another keeper, or by this one's next start, prunes.
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Logger } from '../common/logger';
import type { Component } from '../platform/component';
import type { TemporalClientHolder } from './connection';
import { sharedQueue } from './queues';
import { TemporalUnavailable } from './client';
import { keeperRetention } from './workflows/retention';

export const retentionScheduleId = (taskQueue: string) => `keeper-retention-${taskQueue}`;

export async function setRetentionSchedule(holder: TemporalClientHolder, intervalMs: number): Promise<void> {
  const client = holder.client;
  if (!client) throw new TemporalUnavailable('the Temporal client is not connected');
  const id = retentionScheduleId(holder.taskQueue);
  const action = {
    type: 'startWorkflow' as const,
    workflowType: keeperRetention,
    taskQueue: sharedQueue(holder.taskQueue),
    workflowId: id,
    args: [] as [],
    workflowRunTimeout: '1h' as const,
  };
  const spec = { intervals: [{ every: intervalMs }] };
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
}

export function retentionScheduleComponent(holder: TemporalClientHolder, intervalMs: number, log: Logger): Component {
  const set = () =>
    setRetentionSchedule(holder, intervalMs).catch((err: Error) =>
      log.warn('retention: could not set the pruning schedule; history is pruned once a keeper sets it', {
        error: err.message,
      }),
    );
  return {
    name: 'retention schedule',
    async start() {
      // Temporal away at start: set once the keeper connects (runs/connection.ts).
      if (holder.client) await set();
      else holder.whenConnected(() => void set());
    },
    async stop() {
      /* the schedule is the cluster's: it outlives this keeper */
    },
  };
}
