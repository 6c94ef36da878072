// One-off executions and their per-host answers (db/migrations/20261127400000_executions.ts).
// A host's answer is written once: a retried dispatch that answers again keeps the first row, so
// an event number never changes meaning for a client resuming the stream.
import type { Knex } from 'knex';

export type ExecutionStatus = 'running' | 'done';
export type ExecutionHostStatus = 'ok' | 'changed' | 'failed' | 'unknown';

export interface ExecutionRecord {
  id: string;
  aid: string;
  module: string;
  params: Record<string, unknown>;
  target: { covens?: string[]; sids?: string[]; where?: string };
  sids: string[];
  dry_run: boolean;
  timeout_ms: number;
  output_cap: number;
  batch: number;
  status: ExecutionStatus;
  summary: ExecutionSummary | null;
  created_at: Date;
  finished_at: Date | null;
  /** The Temporal run id of the execution's own workflow (runs/activities/execution-fence.ts). */
  workflow_run_id?: string | null;
}

export interface ExecutionSummary {
  ok: number;
  changed: number;
  failed: number;
  unknown: number;
}

export interface ExecutionHostRow {
  sid: string;
  status: ExecutionHostStatus;
  changed: boolean;
  output: string;
  diff: Record<string, unknown> | null;
  started_at: Date | null;
  finished_at: Date | null;
}

export async function createExecution(
  db: Knex,
  e: Omit<ExecutionRecord, 'status' | 'summary' | 'created_at' | 'finished_at' | 'workflow_run_id'>,
): Promise<void> {
  await db('executions').insert({
    ...e,
    params: JSON.stringify(e.params),
    target: JSON.stringify(e.target),
    status: 'running',
  });
}

export async function getExecution(db: Knex, id: string): Promise<ExecutionRecord | undefined> {
  return db('executions').where({ id }).first();
}

/**
 * Records the Temporal run id of the execution's workflow unless one is recorded: the API after it
 * started the workflow, and the workflow's first activity (whichever comes first; both write the same
 * id). Only a running execution is claimed. Answers the recorded run id (null: none, not running).
 */
export async function claimExecutionWorkflow(db: Knex, id: string, runId: string): Promise<string | null> {
  await db('executions')
    .where({ id, status: 'running' })
    .whereNull('workflow_run_id')
    .update({ workflow_run_id: runId });
  const row = await db('executions').where({ id }).first('workflow_run_id');
  return (row?.workflow_run_id as string | null | undefined) ?? null;
}

/** Executions of one operator still running: the per-operator concurrency limit counts these. */
export async function runningExecutions(db: Knex, aid: string): Promise<number> {
  const [r] = await db('executions').where({ aid, status: 'running' }).count({ n: '*' });
  return Number(r?.n ?? 0);
}

/** The running executions (of one operator, or the 200 oldest of all), oldest first, with when each was recorded. */
export async function runningExecutionsOf(db: Knex, aid?: string): Promise<{ id: string; created_at: Date }[]> {
  const q = db('executions').where({ status: 'running' });
  if (aid !== undefined) q.where({ aid });
  else q.limit(200);
  return q.orderBy('created_at').select('id', 'created_at');
}

/** Records answers (first answer wins), numbered in commit order under one advisory lock. */
/**
 * Keeps what an execution writes on a host: the path its module manages (canonical, or null) and
 * whether its params hold a secret reference (db/repos/step-secrets.ts reads both for the taint).
 */
export async function markExecutionWrite(db: Knex, id: string, path: string | null, secret: boolean): Promise<void> {
  await db('executions').where({ id }).update({ path, secret });
}

export async function recordExecutionHosts(db: Knex, executionId: string, rows: ExecutionHostRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.transaction(async (trx) => {
    await trx.raw("SELECT pg_advisory_xact_lock(hashtext('keeper.execution_hosts.events'))");
    await trx.raw(
      `INSERT INTO execution_hosts (execution_id, sid, status, changed, output, diff, started_at, finished_at, seq)
      SELECT ?, r.sid, r.status, r.changed, r.output, r.diff, r.started_at, r.finished_at, nextval('execution_hosts_seq')
      FROM jsonb_to_recordset(?::jsonb) AS r(sid text, status text, changed boolean, output text, diff jsonb, started_at timestamptz, finished_at timestamptz)
      ON CONFLICT (execution_id, sid) DO NOTHING`,
      [executionId, JSON.stringify(rows)],
    );
  });
}

export interface ExecutionHostEvent extends ExecutionHostRow {
  seq: number;
}

export async function executionHostsAfter(
  db: Knex,
  executionId: string,
  afterSeq: number,
  limit = 500,
): Promise<ExecutionHostEvent[]> {
  const rows = await db('execution_hosts')
    .where({ execution_id: executionId })
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .select('sid', 'status', 'changed', 'output', 'diff', 'started_at', 'finished_at', 'seq');
  return rows.map((r: any) => ({ ...r, seq: Number(r.seq) }));
}

/** Every host of the execution that has no answer yet becomes `unknown` with `reason`; then the summary. */
export async function finishExecution(db: Knex, executionId: string, reason: string): Promise<ExecutionSummary> {
  const e = await getExecution(db, executionId);
  if (!e) throw new Error(`execution ${executionId} is gone`);
  if (e.status === 'done' && e.summary) return e.summary;
  const answered = new Set((await db('execution_hosts').where({ execution_id: executionId }).pluck('sid')) as string[]);
  const now = new Date();
  await recordExecutionHosts(
    db,
    executionId,
    e.sids
      .filter((s) => !answered.has(s))
      .map((sid) => ({
        sid,
        status: 'unknown',
        changed: false,
        output: reason,
        diff: null,
        started_at: null,
        finished_at: now,
      })),
  );
  const counts = (await db('execution_hosts')
    .where({ execution_id: executionId })
    .select('status')
    .count({ n: '*' })
    .groupBy('status')) as { status: ExecutionHostStatus; n: string }[];
  const summary: ExecutionSummary = { ok: 0, changed: 0, failed: 0, unknown: 0 };
  for (const c of counts) summary[c.status] = Number(c.n);
  await db('executions')
    .where({ id: executionId })
    .update({ status: 'done', summary: JSON.stringify(summary), finished_at: now });
  return summary;
}
