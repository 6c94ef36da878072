// Where a run's time goes, from what the keeper recorded of it: the run report (created_at and
// finished_at in PostgreSQL; each step's started_at and finished_at as the soul measured them, steps
// being sent to a host one after another) and the run's Temporal history (each activity's time in the
// queue and at work). Same machine, same clock: the differences are meaningful to the millisecond.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;

export interface ReportSegments {
  /** POST sent -> the run's created_at. */
  post_to_created_ms: number;
  /** created_at -> the first step started on any host: render, routing, dispatch start, first send. */
  created_to_first_step_ms: number;
  /** First step started on the first host -> on the last host: how the dispatch fans out. */
  first_step_spread_ms: number;
  /** Median over hosts of the soul's own time in the steps (sum of finished_at - started_at). */
  host_step_work_ms: number;
  /** Median over hosts of the time between a host's steps (answer back, next step out). */
  host_between_steps_ms: number;
  /** The last step finished on any host -> the run's finished_at: host outcomes, commit. */
  last_step_to_finished_ms: number;
  /** finished_at -> the benchmark saw the incarnation `ready`. */
  finished_to_observed_ms: number;
}

interface Step {
  started_at: string | null;
  finished_at: string | null;
}
export interface RunReport {
  created_at: string;
  finished_at: string | null;
  hosts: { sid: string; status: string; steps: Step[] }[];
}

const at = (s: string | null | undefined) => (s ? Date.parse(s) : NaN);

export function median(xs: number[]): number {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function reportSegments(rep: RunReport, postedAt: number, observedAt: number): ReportSegments {
  const hosts = rep.hosts
    .map((h) => {
      const steps = h.steps
        .filter((s) => s.started_at && s.finished_at)
        .map((s) => ({ start: at(s.started_at), end: at(s.finished_at) }));
      const work = steps.reduce((a, s) => a + (s.end - s.start), 0);
      const first = Math.min(...steps.map((s) => s.start));
      const last = Math.max(...steps.map((s) => s.end));
      return { first, last, work, between: last - first - work };
    })
    .filter((h) => Number.isFinite(h.first));
  const firstStart = Math.min(...hosts.map((h) => h.first));
  const lastEnd = Math.max(...hosts.map((h) => h.last));
  const created = at(rep.created_at);
  const finished = at(rep.finished_at);
  return {
    post_to_created_ms: created - postedAt,
    created_to_first_step_ms: firstStart - created,
    first_step_spread_ms: Math.max(...hosts.map((h) => h.first)) - firstStart,
    host_step_work_ms: median(hosts.map((h) => h.work)),
    host_between_steps_ms: median(hosts.map((h) => h.between)),
    last_step_to_finished_ms: finished - lastEnd,
    finished_to_observed_ms: observedAt - finished,
  };
}

/** Per activity type of a run's workflow: time scheduled -> started (queue) and started -> closed (work), summed over its calls. */
export interface ActivityTimes {
  [activity: string]: { calls: number; queue_ms: number; work_ms: number };
}

export interface WorkflowTimes {
  /** Workflow started -> closed, as Temporal recorded it. */
  workflow_ms: number;
  activities: ActivityTimes;
  /** workflow_ms less the activities' queue and work: workflow tasks and Temporal's own round trips. */
  outside_activities_ms: number;
}

const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  t ? Number(String(t.seconds ?? 0)) * 1000 + (t.nanos ?? 0) / 1e6 : NaN;

export async function workflowTimes(client: Client, workflowId: string): Promise<WorkflowTimes> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Map<number, { name: string; at: number; startedAt?: number }>();
  const activities: ActivityTimes = {};
  let started = NaN;
  let closed = NaN;
  for (const e of history.events ?? []) {
    const t = ms(e.eventTime);
    const id = Number(String(e.eventId));
    switch (e.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
        started = t;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
        closed = t;
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        scheduled.set(id, { name: e.activityTaskScheduledEventAttributes?.activityType?.name ?? '?', at: t });
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const s = scheduled.get(Number(String(e.activityTaskStartedEventAttributes?.scheduledEventId)));
        if (s) s.startedAt = t;
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
      case EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
      case EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: {
        const attrs =
          e.activityTaskCompletedEventAttributes ??
          e.activityTaskFailedEventAttributes ??
          e.activityTaskTimedOutEventAttributes;
        const s = scheduled.get(Number(String(attrs?.scheduledEventId)));
        if (!s || s.startedAt === undefined) break;
        const a = (activities[s.name] ??= { calls: 0, queue_ms: 0, work_ms: 0 });
        a.calls++;
        a.queue_ms += s.startedAt - s.at;
        a.work_ms += t - s.startedAt;
        break;
      }
      default:
        break;
    }
  }
  const inActivities = Object.values(activities).reduce((a, x) => a + x.queue_ms + x.work_ms, 0);
  return { workflow_ms: closed - started, activities, outside_activities_ms: closed - started - inActivities };
}

/** The median of each numeric field over runs (of flat records, or of ActivityTimes-like nesting). */
export function medianRecord<T extends object>(records: T[]): T {
  const out: Record<string, unknown> = {};
  const first = records[0] as Record<string, unknown> | undefined;
  for (const key of Object.keys(first ?? {})) {
    const values = records.map((r) => (r as Record<string, unknown>)[key]);
    if (typeof values[0] === 'number') out[key] = median(values as number[]);
    else if (values[0] && typeof values[0] === 'object') out[key] = medianRecord(values.filter(Boolean) as object[]);
  }
  return out as T;
}
