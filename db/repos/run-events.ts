// Reads for following a run: its head (status, phase, outcome) and the host outcomes numbered after
// a given event (db/migrations/20261124001001_run_host_events.ts numbers them in commit order).
import type { Knex } from 'knex';
import type { HostStatus, RunPhase, RunStatus } from './runs';

export interface RunHead {
  apply_id: string;
  incarnation: string;
  operation: string;
  status: RunStatus;
  phase: RunPhase;
  error: string | null;
  summary: Record<string, unknown> | null;
  finished_at: Date | null;
  hosts: number;
  /** What the run waits for at a gate (db/repos/run-waiting.ts), null when it does not. */
  waiting: { for: 'health' | 'approval'; batch: number; health?: string; since: string } | null;
}

export interface HostEvent {
  seq: number;
  sid: string;
  status: HostStatus;
  reason: string | null;
  batch: number | null;
  steps: number;
  changed: number;
  failed: number;
  finished_at: Date | null;
}

export async function runHead(db: Knex, applyId: string): Promise<RunHead | undefined> {
  const row = await db('incarnation_runs as r')
    .select(
      'r.apply_id',
      'r.incarnation',
      'r.operation',
      'r.status',
      'r.phase',
      'r.error',
      'r.summary',
      'r.finished_at',
      'r.waiting',
      db.raw('(SELECT count(*) FROM run_hosts h WHERE h.apply_id = r.apply_id)::int AS hosts'),
    )
    .where('r.apply_id', applyId)
    .first();
  return row as RunHead | undefined;
}

/** Finished hosts whose outcome was numbered after `after`, oldest first, at most `limit`. */
export async function hostEventsAfter(db: Knex, applyId: string, after: number, limit = 500): Promise<HostEvent[]> {
  const rows = await db('run_hosts as h')
    .select(
      'h.event_seq as seq',
      'h.sid',
      'h.status',
      'h.reason',
      'h.batch',
      'h.finished_at',
      db.raw(`(SELECT count(*) FROM run_steps s WHERE s.apply_id = h.apply_id AND s.sid = h.sid)::int AS steps`),
      db.raw(
        `(SELECT count(*) FROM run_steps s WHERE s.apply_id = h.apply_id AND s.sid = h.sid AND s.changed)::int AS changed`,
      ),
      db.raw(
        `(SELECT count(*) FROM run_steps s WHERE s.apply_id = h.apply_id AND s.sid = h.sid AND s.status IN ('failed', 'unknown'))::int AS failed`,
      ),
    )
    .where('h.apply_id', applyId)
    .whereNotNull('h.event_seq')
    .where('h.event_seq', '>', after)
    .orderBy('h.event_seq')
    .limit(limit);
  return rows.map((r: any) => ({ ...r, seq: Number(r.seq) })) as HostEvent[];
}
