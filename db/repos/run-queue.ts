// An operator's run behind a converge run (issue 30, "New hosts in one run"). The converger's run is
// a run like any other and holds the incarnation's lock; an operator's run that arrives meanwhile is
// not refused: it is recorded with `waits_for` (its workflow waits in Temporal, runs/workflows/run.ts)
// and takes the lock when the converge run ends, in the transaction that ends it, so the converger
// cannot slip another run in between. It renders every host of the covens, the new ones included.
// A plan applied meanwhile waits the same way, and is checked again when its turn comes (./plan-recheck.ts).
// One run waits at most: a second operator's run gets the 409 of the lock, as does an operator's run
// behind another operator's run (that is the lock, docs/runs.md "Converging new hosts").
import type { Knex } from 'knex';
import { actorKindOf } from './activity';
import { RepoNotFound } from './errors';
import { getIncarnation, refusal, type IncarnationRecord } from './incarnations';
import { finishRun, getRun, insertRun, type NewRun } from './runs';

/**
 * Takes the lock (ready -> applying) and records the run, or, while a converge run holds the lock and
 * no run waits for it yet, records the run waiting for it. Returns the converge run's apply_id when
 * the run waits. Anything else is the lock's refusal (RunRefused, a 409).
 */
export async function beginRunOrWait(
  db: Knex,
  name: string,
  run: NewRun,
  opts: {
    /** Runs in the same transaction once the run is recorded (taking the lock or waiting): a plan is claimed once. */
    within?: (trx: Knex.Transaction) => Promise<void>;
  } = {},
): Promise<{ waitsFor?: string }> {
  return db.transaction(async (trx) => {
    // The row lock orders two starts of the same incarnation: one takes the lock or waits, the other sees it.
    const inc = (await trx('incarnations').where({ name }).forUpdate().first()) as IncarnationRecord | undefined;
    if (!inc) throw new RepoNotFound(`incarnation ${name} does not exist`);
    if (inc.status === 'ready') {
      await trx('incarnations').where({ name }).update({
        status: 'applying',
        current_apply_id: run.applyId,
        last_apply_id: run.applyId,
        updated_at: trx.fn.now(),
      });
      await insertRun(trx, run);
      await opts.within?.(trx);
      return {};
    }
    const current =
      inc.status === 'applying' && inc.current_apply_id ? await getRun(trx, inc.current_apply_id) : undefined;
    if (!current || current.status !== 'running' || actorKindOf(current.created_by) !== 'converger') throw refusal(inc);
    const waiter = await trx('incarnation_runs')
      .where({ waits_for: current.apply_id, status: 'running' })
      .first('apply_id');
    if (waiter)
      throw refusal(
        inc,
        `incarnation ${name} is applying converge run ${current.apply_id} and run ${waiter.apply_id} already waits for it; wait for that run to finish`,
      );
    await insertRun(trx, run);
    await trx('incarnation_runs').where({ apply_id: run.applyId }).update({ waits_for: current.apply_id });
    await opts.within?.(trx);
    return { waitsFor: current.apply_id };
  });
}

/**
 * The end of a run, in its committing or locking transaction: the run waiting for it (if any) takes
 * the lock when the incarnation is `ready` again; when it is not (the converge run locked it, or it
 * is gone), the waiting run ends failed with the reason and runs nothing. Returns the waiting run.
 */
export async function passLock(trx: Knex.Transaction, incarnation: string, applyId: string): Promise<string | null> {
  const waiter = (await trx('incarnation_runs').where({ waits_for: applyId, status: 'running' }).first('apply_id')) as
    | { apply_id: string }
    | undefined;
  if (!waiter) return null;
  const n = await trx('incarnations').where({ name: incarnation, status: 'ready' }).update({
    status: 'applying',
    current_apply_id: waiter.apply_id,
    last_apply_id: waiter.apply_id,
    updated_at: trx.fn.now(),
  });
  if (n === 0) {
    const inc = await getIncarnation(trx, incarnation);
    await finishRun(trx, waiter.apply_id, {
      status: 'failed',
      error: inc
        ? `converge run ${applyId}, which this run waited for, left incarnation ${incarnation} ${inc.status}; nothing was run (${inc.status === 'error_locked' ? 'unlock it, then run again' : 'run again'})`
        : `incarnation ${incarnation} is gone; nothing was run`,
      summary: { hosts: { ok: 0, changed: 0, failed: 0, unknown: 0, skipped: 0, pending: 0 }, failed_phase: 'wait' },
    });
  }
  return waiter.apply_id;
}

/** What a waiting run's workflow asks (runs/activities/shared.ts awaitTurn): go (it holds the lock), wait, or ended (failed while waiting). */
export async function turnOf(db: Knex, applyId: string): Promise<'go' | 'wait' | 'ended'> {
  const row = await db('incarnation_runs as r')
    .leftJoin('incarnations as i', 'i.name', 'r.incarnation')
    .where('r.apply_id', applyId)
    .first('r.status as status', 'i.status as inc_status', 'i.current_apply_id as current');
  if (!row || row.status !== 'running') return 'ended';
  if (row.inc_status === 'applying' && row.current === applyId) return 'go';
  // Removed with force while the run waited (the forced delete ends only the run holding the lock).
  if (row.inc_status === null) {
    await finishRun(db, applyId, {
      status: 'failed',
      error: 'the incarnation was removed while this run waited; nothing was run',
      summary: { hosts: { ok: 0, changed: 0, failed: 0, unknown: 0, skipped: 0, pending: 0 }, failed_phase: 'wait' },
    });
    return 'ended';
  }
  return 'wait';
}
