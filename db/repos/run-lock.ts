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
export async function checkRunHoldsLock(db: Knex | Knex.Transaction, applyId: string, opts: { finished?: 'allow' | 'refuse'; plan?: 'allow' | 'refuse' } = {}): Promise<RunLockVerdict> {
  const row = await db('incarnation_runs as r')
    .leftJoin('incarnations as i', 'i.name', 'r.incarnation')
    .where('r.apply_id', applyId)
    .first('r.status as run_status', 'r.kind as kind', 'i.name as inc_name', 'i.status as inc_status', 'i.current_apply_id as current_apply_id');
  if (!row) return { ok: false, reason: `run ${applyId} does not exist; runs are started through the keeper's API only` };
  // A finished run (or plan) first: a committed `destroy` removed its incarnation, and a retried commit must still pass.
  if (row.run_status !== 'running') {
    if (opts.finished === 'allow') return { ok: true };
    return { ok: false, reason: `run ${applyId} has already ended (${row.run_status})` };
  }
  // A plan takes no lock (it changes nothing: every step goes in check mode); it only needs its
  // row, which the API alone writes.
  // Only the render and check-mode dispatch steps of a plan pass: commit, lock and upgrade refuse it.
  if (row.kind === 'plan') return opts.plan === 'allow' ? { ok: true } : { ok: false, reason: `${applyId} is a plan: it renders and checks, it never commits or locks` };
  if (!row.inc_name) return { ok: false, reason: `run ${applyId} no longer has an incarnation` };
  if (row.inc_status !== 'applying' || row.current_apply_id !== applyId) {
    return { ok: false, reason: `run ${applyId} does not hold incarnation ${row.inc_name}'s lock (the incarnation is ${row.inc_status}${row.current_apply_id ? ` for run ${row.current_apply_id}` : ''})` };
  }
  return { ok: true };
}
