// What a run suite prints when a run does not end in time, so that one failure names its cause
// instead of "timed out waiting for slow to settle": the run report (which hosts and steps are still
// pending), the run's workflow as Temporal sees it (its pending activities with their attempts,
// last failures and heartbeats, its pending workflow task, its last events), the keeper's log tail,
// and each soul's connection as the keeper and the soul itself see it. Every part is read on its own:
// one that cannot be read says why, the others are still printed.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { connectStackTemporal } from '../support/temporal-client';
import { api, type KeeperAccess } from '../agents/harness';
import type { KeeperProcess, TestSoul } from './keeper';

const EVENTS = 25;

/** A timestamp of the Temporal API as an ISO string (or null). */
function when(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): string | null {
  if (!ts?.seconds) return null;
  return new Date(Number(ts.seconds) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6)).toISOString();
}

async function part(title: string, read: () => Promise<string>): Promise<string> {
  try {
    return `--- ${title} ---\n${await read()}`;
  } catch (err) {
    return `--- ${title} --- (could not be read: ${(err as Error).message})`;
  }
}

/** The workflow `workflowId`: its status, pending activities and task, and its last events, one line each. */
export async function describeWorkflow(namespace: string, workflowId: string): Promise<string> {
  const connection = await connectStackTemporal();
  try {
    const client = new Client({ connection, namespace });
    const handle = client.workflow.getHandle(workflowId);
    const d = await handle.describe();
    const lines = [`status ${d.status.name}, started ${d.startTime.toISOString()}, task queue ${d.taskQueue}`];
    for (const a of d.raw.pendingActivities ?? [])
      lines.push(
        `pending activity ${a.activityType?.name} (id ${a.activityId}): ${temporal.api.enums.v1.PendingActivityState[a.state ?? 0]}, ` +
          `attempt ${a.attempt}/${a.maximumAttempts || '∞'}, scheduled ${when(a.scheduledTime)}, ` +
          `started ${when(a.lastStartedTime)}, last attempt ended ${when(a.lastAttemptCompleteTime)}, last heartbeat ${when(a.lastHeartbeatTime)}, worker ${a.lastWorkerIdentity || '-'}` +
          (a.lastFailure?.message ? `, last failure: ${a.lastFailure.message}` : ''),
      );
    const t = d.raw.pendingWorkflowTask;
    if (t)
      lines.push(
        `pending workflow task: ${temporal.api.enums.v1.PendingWorkflowTaskState[t.state ?? 0]}, attempt ${t.attempt}, ` +
          `scheduled ${when(t.scheduledTime)}, started ${when(t.startedTime)}`,
      );
    const events = (await handle.fetchHistory()).events ?? [];
    lines.push(`last ${Math.min(EVENTS, events.length)} of ${events.length} events:`);
    for (const e of events.slice(-EVENTS)) {
      const type = temporal.api.enums.v1.EventType[e.eventType ?? 0]?.replace(/^EVENT_TYPE_/, '');
      const attrs = e as Record<string, any>;
      const detail = [
        attrs.activityTaskScheduledEventAttributes?.activityType?.name,
        attrs.activityTaskScheduledEventAttributes?.taskQueue?.name &&
          `queue ${attrs.activityTaskScheduledEventAttributes.taskQueue.name}`,
        attrs.activityTaskStartedEventAttributes && `attempt ${attrs.activityTaskStartedEventAttributes.attempt}`,
        attrs.activityTaskFailedEventAttributes?.failure?.message,
        attrs.activityTaskTimedOutEventAttributes?.failure?.message,
        attrs.workflowTaskTimedOutEventAttributes &&
          `timeout ${temporal.api.enums.v1.TimeoutType[attrs.workflowTaskTimedOutEventAttributes.timeoutType ?? 0]}`,
        attrs.workflowTaskFailedEventAttributes?.failure?.message,
        attrs.markerRecordedEventAttributes?.markerName,
        attrs.workflowTaskStartedEventAttributes?.identity,
      ]
        .filter(Boolean)
        .join(', ');
      lines.push(`  #${e.eventId} ${when(e.eventTime)} ${type}${detail ? ` (${detail})` : ''}`);
    }
    return lines.join('\n');
  } finally {
    await connection.close();
  }
}

/** Everything a stuck run's failure should show (see the head of this file). */
export async function runDiagnosis(
  k: KeeperAccess,
  incarnation: string,
  applyId: string,
  opts: { keeper?: KeeperProcess | undefined; earlierKeeperLog?: string; souls?: TestSoul[] } = {},
): Promise<string> {
  const parts = [
    await part('incarnation', async () => {
      const inc = (await api(k, 'GET', `/v1/incarnations/${incarnation}`)).body ?? {};
      return `${inc.status}, apply_id ${inc.apply_id}`;
    }),
    await part('run report', async () => {
      const rep = (await api(k, 'GET', `/v1/incarnations/${incarnation}/runs/${applyId}`)).body ?? {};
      // One line per host: its status and each step's (r: answered from the soul's ledger).
      const hosts = (rep.hosts ?? []).map(
        (h: any) =>
          `  ${h.sid}: ${h.status} at ${h.kid ?? '-'}${h.reason ? ` (${h.reason})` : ''}; steps ` +
          (h.steps ?? [])
            .map((st: any) => `${st.index}:${st.status}${st.replayed ? 'r' : ''}@${st.finished_at ?? '-'}`)
            .join(' '),
      );
      return [`${rep.status} in ${rep.phase}${rep.error ? `: ${rep.error}` : ''}`, ...hosts].join('\n');
    }),
    await part(`workflow ${applyId}`, () => describeWorkflow(k.config.temporal.namespace, applyId)),
  ];
  for (const s of opts.souls ?? []) {
    parts.push(
      await part(`soul ${s.sid}`, async () => {
        const rec = (await api(k, 'GET', `/v1/souls/${s.sid}`)).body ?? {};
        const statusFile = path.join(s.dir, 'seed', 'status.json');
        const own = fs.existsSync(statusFile) ? fs.readFileSync(statusFile, 'utf8').trim() : '(no status file)';
        const exit = s.run.child.exitCode ?? s.run.child.signalCode;
        return (
          `keeper sees: ${rec.status} at ${rec.connected_kid ?? '-'}, last seen ${rec.last_seen_at ?? '-'}\n` +
          `soul says: ${own}${exit !== null ? ` (process ended: ${exit})` : ''}\n` +
          `log tail:\n${s.run.log.stderr.slice(-1500)}`
        );
      }),
    );
  }
  if (opts.earlierKeeperLog !== undefined)
    parts.push(`--- the killed keeper's log tail ---\n${opts.earlierKeeperLog.slice(-2500)}`);
  if (opts.keeper)
    parts.push(
      `--- keeper log tail (pid ${opts.keeper.child.pid}, ${opts.keeper.child.exitCode === null ? 'running' : `exited ${opts.keeper.child.exitCode}`}) ---\n${opts.keeper.log.stderr.slice(-5000)}`,
    );
  return parts.join('\n');
}
