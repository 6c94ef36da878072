// What one run costs Temporal, read back from its history: the benches that report it (bench/fanout,
// bench/sizing) count the same things the same way.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;

export interface TemporalCost {
  workflows: number;
  history_events: number;
  /** The histories' size as Temporal stores them (protobuf), parent and children together. */
  history_bytes: number;
  activities: number;
  actions: number;
}

/**
 * History events and bytes of a run's workflow and its child workflows (a batch of more than 500
 * hosts is split into children), and Temporal "actions" as billed: workflows started, activities
 * scheduled, timers started, child workflows initiated, signals and markers (activity retries not
 * counted).
 */
export async function temporalCost(client: Client, workflowId: string): Promise<TemporalCost> {
  const out = { workflows: 0, history_events: 0, history_bytes: 0, activities: 0, actions: 0 };
  const queue = [workflowId];
  while (queue.length > 0) {
    const id = queue.shift()!;
    const history = await client.workflow.getHandle(id).fetchHistory();
    out.workflows++;
    out.history_bytes += temporal.api.history.v1.History.encode(history).finish().byteLength;
    out.actions++; // the workflow's start
    for (const e of history.events ?? []) {
      out.history_events++;
      switch (e.eventType) {
        case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
          out.activities++;
          out.actions++;
          break;
        case EventType.EVENT_TYPE_TIMER_STARTED:
        case EventType.EVENT_TYPE_MARKER_RECORDED:
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        case EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
          out.actions++;
          break;
        case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
          queue.push(e.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId!);
          break;
        default:
          break;
      }
    }
  }
  return out;
}
