// Retention (docs/configuration.md "retention"): history older than its configured age is deleted,
// in bounded batches so one prune never holds long locks. Never pruned: a run or plan still running,
// a run an incarnation's state or history refers to (current, last, last committed, any
// incarnation_history row), and the plan an incarnation's drift check shows. A run's plan rows,
// hosts, steps and events go with it (ON DELETE CASCADE).
import type { Knex } from 'knex';
import { pruneActivity } from './activity';

const BATCH = 500;

export interface PruneCutoffs {
  plans: Date;
  runs: Date;
  activity: Date;
}
export interface PruneCounts {
  plans: number;
  runs: number;
  activity: number;
}

async function pruneKind(db: Knex, kind: 'run' | 'plan', before: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const { rowCount } = await db.raw(
      `
      delete from incarnation_runs where apply_id in (
        select r.apply_id from incarnation_runs r
        where r.kind = ? and r.status <> 'running' and r.created_at < ?
          and not exists (select 1 from incarnations i where r.apply_id in (i.current_apply_id, i.last_apply_id, i.last_committed_apply_id, i.drift_plan_id))
          and not exists (select 1 from incarnation_history h where h.apply_id = r.apply_id)
        limit ${BATCH})`,
      [kind, before],
    );
    total += rowCount as number;
    if ((rowCount as number) < BATCH) return total;
  }
}

export async function pruneHistory(db: Knex, cutoffs: PruneCutoffs): Promise<PruneCounts> {
  return {
    plans: await pruneKind(db, 'plan', cutoffs.plans),
    runs: await pruneKind(db, 'run', cutoffs.runs),
    activity: await pruneActivity(db, cutoffs.activity),
  };
}
