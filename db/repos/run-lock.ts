// Whether a run may act: the one check every run activity makes before it touches anything.
// The API is the only place that takes an incarnation's lock (`applying` + current_apply_id); a
// workflow started on Temporal by anyone else names an apply_id that does not hold it (a made-up one,
// a finished run's, or the failed run an `error_locked` incarnation still points at), and every one
// of its activities is refused, so it renders, dispatches and commits nothing. A plan (kind 'plan',
// docs/plans.md) holds no lock and its dispatch sends check-mode steps only.
import type { Knex } from 'knex';

export type RunLockVerdict = { ok: true } | { ok: false; reason: string };

/**
 * `finished: 'allow'` lets a run that already ended through (commit and lock are retried after a
 * lost answer, and are no-ops on a finished run); a running run must hold the lock either way.
 */
export async function checkRunHoldsLock(
  db: Knex | Knex.Transaction,
  applyId: string,
  opts: { finished?: 'allow' | 'refuse'; plan?: 'allow' | 'refuse' } = {},
): Promise<RunLockVerdict> {
  const row = await db('incarnation_runs as r')
    .leftJoin('incarnations as i', 'i.name', 'r.incarnation')
    .where('r.apply_id', applyId)
    .first(
      'r.status as run_status',
      'r.kind as kind',
      'i.name as inc_name',
      'i.status as inc_status',
      'i.current_apply_id as current_apply_id',
    );
  if (!row)
    return { ok: false, reason: `run ${applyId} does not exist; runs are started through the keeper's API only` };
  // A finished run (or plan) first: a committed `destroy` removed its incarnation, and a retried commit must still pass.
  if (row.run_status !== 'running') {
    if (opts.finished === 'allow') return { ok: true };
    return { ok: false, reason: `run ${applyId} has already ended (${row.run_status})` };
  }
  // A plan takes no lock (it changes nothing: every step goes in check mode); it only needs its
  // row, which the API alone writes.
  // Only the render and check-mode dispatch steps of a plan pass: commit, lock and upgrade refuse it.
  if (row.kind === 'plan')
    return opts.plan === 'allow'
      ? { ok: true }
      : { ok: false, reason: `${applyId} is a plan: it renders and checks, it never commits or locks` };
  if (!row.inc_name) return { ok: false, reason: `run ${applyId} no longer has an incarnation` };
  if (row.inc_status !== 'applying' || row.current_apply_id !== applyId) {
    return {
      ok: false,
      reason: `run ${applyId} does not hold incarnation ${row.inc_name}'s lock (the incarnation is ${row.inc_status}${row.current_apply_id ? ` for run ${row.current_apply_id}` : ''})`,
    };
  }
  return { ok: true };
}

// The apply_id fence (issue 28, item 7). Holding the lock says the run is live; it does not say that
// the workflow asking is the run's own: anyone who can reach Temporal may start a workflow naming a
// live run's apply_id (another workflow id with the apply_id in its input, another workflow type, or
// the same workflow id again once the keeper's execution was terminated). A run therefore belongs to
// one workflow execution, named by the Temporal run id that Temporal itself gives an activity
// (never by anything in the workflow's input, which its starter chose): recorded by the keeper when
// it starts the workflow, or claimed by the workflow's first activity, whichever comes first.

/** An activity's workflow execution, as Temporal reports it (activity info), never as its input says. */
export interface WorkflowExecution {
  workflowId: string;
  runId: string;
}

/** Marks runs started before the fence (migration 20261126300001): their own workflow claims them. */
export const LEGACY_CLAIM = 'legacy:unclaimed';

/**
 * Records the execution the keeper has just started for a run. It wins over a claim made in the
 * moment between the start and this write: only the keeper knows which execution it started, and
 * an execution that claimed first is refused from its next activity on.
 */
export async function recordRunWorkflow(db: Knex, applyId: string, runId: string): Promise<void> {
  await db('incarnation_runs').where({ apply_id: applyId, status: 'running' }).update({ workflow_run_id: runId });
}

/** The execution that owns a run (null: not yet claimed). */
export async function runWorkflowOf(db: Knex | Knex.Transaction, applyId: string): Promise<string | null> {
  const row = await db('incarnation_runs').where({ apply_id: applyId }).first('workflow_run_id');
  return row?.workflow_run_id ?? null;
}

/**
 * Whether `exec` is the run's own workflow execution. `claim` (the run's first activity: render,
 * upgrade) takes an unclaimed run for `exec`; every other activity needs the claim to be `exec`'s.
 * `owner` is the execution whose run id is compared: the activity's own for the run's workflow
 * (workflow id = apply_id), the parent's for a shard (the caller checked it with Temporal).
 */
export async function checkRunWorkflow(
  db: Knex | Knex.Transaction,
  applyId: string,
  exec: WorkflowExecution,
  opts: { claim?: boolean } = {},
): Promise<RunLockVerdict> {
  if (exec.workflowId !== applyId) {
    return {
      ok: false,
      reason: `workflow ${exec.workflowId} is not run ${applyId}'s workflow (a run's workflow id is its apply_id; runs are started through the keeper's API only)`,
    };
  }
  // One statement: two executions claiming at once cannot both win.
  const claimed = await db('incarnation_runs')
    .where({ apply_id: applyId })
    .where((q) => {
      q.where('workflow_run_id', LEGACY_CLAIM);
      if (opts.claim) q.orWhereNull('workflow_run_id');
    })
    .update({ workflow_run_id: exec.runId }, ['apply_id']);
  if (claimed.length > 0) return { ok: true };
  const owner = await runWorkflowOf(db, applyId);
  if (owner === exec.runId) return { ok: true };
  if (owner === null)
    return {
      ok: false,
      reason: `run ${applyId} was not claimed by its workflow's first activity; execution ${exec.runId} may not act for it`,
    };
  return {
    ok: false,
    reason: `run ${applyId} belongs to workflow execution ${owner}; execution ${exec.runId} of the same workflow id was started by someone else and may not act for it`,
  };
}
