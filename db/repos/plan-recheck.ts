// A plan applied while the converger's run held the incarnation (issue 30) waits for that run
// (./run-queue.ts), which commits before the plan's turn comes: by then the plan's base is no longer
// the last commit. Refusing it as stale would refuse every plan applied during a converge run; taking
// it as exact could apply a plan to hosts the converge run has just changed. So it is checked again
// against what the converge run did, once it holds the lock and before anything is rendered or sent:
//
// - still exact when the converge run committed straight on the plan's base, left the state as it
//   was, and applied to none of the hosts the plan covers (it only brought in hosts the plan does
//   not cover). A host it applied to counts even when it reports `ok`: a step repeated `until:` it
//   holds ends `ok` after changing the host, so only "not reached" is sure to be as the plan saw it. Those hosts now carry the state before the plan, which the plan does
//   not reach: they are left pending for the incarnation, so the converger brings them in with the
//   plan's operation and input once it committed (./pending-hosts.ts), exactly as a new host.
// - stale otherwise: the run ends failed with the error of a stale plan (docs/plans.md), naming what
//   the converge run changed; nothing is applied, the incarnation is `ready` again, unlocked.
import type { Knex } from 'knex';
import { finishRun, getRun } from './runs';

const NOTHING = { ok: 0, changed: 0, failed: 0, unknown: 0, skipped: 0, pending: 0 };

/**
 * Called by the run's workflow once its turn came (it holds the lock). Returns null when the plan
 * still holds (the run goes on), else the reason it ended the run with. Idempotent: a run already
 * ended answers its error.
 */
export async function recheckWaitedPlan(db: Knex, applyId: string): Promise<string | null> {
  return db.transaction(async (trx) => {
    const run = await getRun(trx, applyId);
    if (!run) return `run ${applyId} does not exist`;
    if (run.status !== 'running') return run.status === 'failed' ? (run.error ?? 'the run failed') : null;
    if (!run.plan_id) return null;
    const plan = await getRun(trx, run.plan_id);
    const inc = await trx('incarnations').where({ name: run.incarnation }).forUpdate().first();
    if (!plan || !inc) return null;
    const now: string | null = inc.last_committed_apply_id;
    if (now === plan.plan_base) return null;
    const changed: string[] = [];
    const converge = run.waits_for ? await getRun(trx, run.waits_for) : undefined;
    // The converge run's commit is the only one since the plan's base (the plan was not stale when
    // the run was recorded, and that run held the lock since); anything else is stale as it stands.
    const straight = converge && now === converge.apply_id;
    if (straight && (converge.summary as { state_changed?: boolean } | null)?.state_changed)
      changed.push('it changed the state');
    const covered = trx('run_plans').select('sid').where({ apply_id: plan.apply_id });
    const touched = straight
      ? ((await trx('run_hosts')
          .select('sid', 'status')
          .where({ apply_id: converge.apply_id })
          .whereIn('sid', covered)
          .whereIn('status', ['ok', 'changed', 'failed', 'unknown'])
          .orderBy('sid')) as { sid: string; status: string }[])
      : [];
    if (touched.length > 0)
      changed.push(
        `it applied to host(s) the plan had checked: ${touched
          .slice(0, 10)
          .map((h) => h.sid)
          .join(', ')}${touched.length > 10 ? ` and ${touched.length - 10} more` : ''}`,
      );
    if (straight && changed.length === 0) {
      await leaveBehind(trx, run.incarnation, applyId, converge.apply_id, plan.apply_id, covered);
      return null;
    }
    const why = changed.length > 0 ? ` (${changed.join('; ')})` : '';
    const reason =
      `plan ${plan.apply_id} is stale: it was made on the state of run ${plan.plan_base ?? '(none)'}, and run ${now ?? '(none)'} ` +
      `has committed since${why}; make a new plan with POST /v1/incarnations/${run.incarnation}/plans; nothing was applied`;
    await finishRun(trx, applyId, {
      status: 'failed',
      error: reason,
      summary: { hosts: NOTHING, failed_phase: 'wait' },
    });
    // Refused as a stale plan is refused at the API: the incarnation is as the converge run left it
    // (its last run that one again), and the refused run stays readable by its apply_id.
    await trx('incarnations')
      .where({ name: run.incarnation, status: 'applying', current_apply_id: applyId })
      .update({ status: 'ready', current_apply_id: null, last_apply_id: now, updated_at: trx.fn.now() });
    return reason;
  });
}

/** The converge run's hosts the plan does not cover: pending for the incarnation until a run applies to them. */
async function leaveBehind(
  trx: Knex.Transaction,
  incarnation: string,
  applyId: string,
  convergeId: string,
  planId: string,
  covered: Knex.QueryBuilder,
): Promise<void> {
  const sids = (await trx('run_hosts')
    .where({ apply_id: convergeId })
    .whereIn('status', ['ok', 'changed'])
    .whereNotIn('sid', covered)
    .pluck('sid')) as string[];
  if (sids.length === 0) return;
  // epoch null: the converger takes the host as soon as its soul is connected (pending-hosts.ts).
  await trx('incarnation_pending_hosts')
    .insert(
      sids.map((sid) => ({
        incarnation,
        sid,
        apply_id: applyId,
        status: 'unknown',
        reason: `converge run ${convergeId} applied the state before plan ${planId}, which does not cover this host`,
        epoch: null,
        since: trx.fn.now(),
      })),
    )
    .onConflict(['incarnation', 'sid'])
    .merge();
}
