// What a running run waits for between batches (docs/runs.md "Gates between batches"): a health
// check or an operator's approval, after which batch, since when. Written by the run's workflow
// through its activities, read by the run answer, its SSE stream, the /ui and the approve route
// (which answers 409 unless the run waits for approval). Cleared when the wait ends.
import type { Knex } from 'knex';

export interface RunWaitingRecord {
  for: 'health' | 'approval';
  batch: number;
  health?: string;
  since: string;
}

export async function setRunWaiting(
  db: Knex,
  applyId: string,
  waiting: { for: 'health' | 'approval'; batch: number; health?: string } | null,
): Promise<void> {
  await db('incarnation_runs')
    .where({ apply_id: applyId, status: 'running' })
    .update({
      waiting: waiting
        ? db.raw(
            `jsonb_build_object('since', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) || ?::jsonb`,
            [JSON.stringify(waiting)],
          )
        : null,
    });
}

/** What the run waits for now; undefined when it is not running or not waiting. */
export async function runWaiting(db: Knex, applyId: string): Promise<RunWaitingRecord | undefined> {
  const row = (await db('incarnation_runs').select('status', 'waiting').where({ apply_id: applyId }).first()) as
    | { status: string; waiting: RunWaitingRecord | null }
    | undefined;
  return row && row.status === 'running' && row.waiting ? row.waiting : undefined;
}
