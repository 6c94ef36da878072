// Drift checks of an incarnation (docs/drift.md): the schedule's settings and the last check's
// outcome, on the incarnation's row. The check itself is a plan (db/repos/plans.ts).
import type { Knex } from 'knex';
import type { DriftStatus } from './incarnations';
import { getRun, type RunRecord } from './runs';
import { RepoNotFound } from './errors';
import { activityTarget, appendActivity, DRIFT_ACTOR } from './activity';

export async function setDriftCheck(
  db: Knex,
  name: string,
  settings: { interval: string | null; autoRepair: boolean },
): Promise<void> {
  const n = await db('incarnations')
    .where({ name })
    .update({
      drift_interval: settings.interval,
      drift_auto_repair: settings.autoRepair,
      updated_at: db.fn.now(),
      // Turned off: the last outcome is not a statement about now any more.
      ...(settings.interval === null
        ? { drift_status: 'unchecked', drifted_sids: [], drift_plan_id: null, drift_checked_at: null }
        : {}),
    });
  if (n === 0) throw new RepoNotFound(`incarnation ${name} does not exist`);
}

export async function recordDrift(
  db: Knex,
  name: string,
  outcome: { status: DriftStatus; planId: string; drifted: string[] },
): Promise<void> {
  await db('incarnations').where({ name }).whereNotNull('drift_interval').update({
    drift_status: outcome.status,
    drift_plan_id: outcome.planId,
    drifted_sids: outcome.drifted,
    drift_checked_at: db.fn.now(),
  });
  // A check that found drift (or could not check) is worth a row of the activity stream; one that
  // found everything in sync changed nothing and would only fill it at every tick.
  if (outcome.status === 'drifted' || outcome.status === 'check_failed') {
    await appendActivity(db, {
      actor: DRIFT_ACTOR,
      actorKind: 'drift',
      via: 'drift',
      action: `drift-check ${outcome.status}`,
      target: activityTarget(name),
      status: 200,
      applyId: outcome.planId,
    });
  }
}

/** Hosts where the drift plan found a step that would change something: they drifted. */
export async function driftedHosts(db: Knex, planId: string): Promise<{ drifted: string[]; unchecked: string[] }> {
  const rows = (await db('run_hosts').select('sid', 'status').where({ apply_id: planId }).orderBy('sid')) as {
    sid: string;
    status: string;
  }[];
  return {
    drifted: rows.filter((r) => r.status === 'changed').map((r) => r.sid),
    unchecked: rows.filter((r) => r.status === 'failed' || r.status === 'unknown').map((r) => r.sid),
  };
}

/** Drifted hosts per incarnation, for the metric. */
export async function driftCounts(db: Knex): Promise<{ name: string; drifted: number }[]> {
  const rows = await db('incarnations')
    .select('name', db.raw('cardinality(drifted_sids)::int as drifted'))
    .whereNotNull('drift_interval');
  return rows as { name: string; drifted: number }[];
}

/** The incarnation's last committed operation (an upgrade is looked through to the run before it). */
export async function lastCommittedRun(db: Knex, applyId: string): Promise<RunRecord | undefined> {
  const run = await getRun(db, applyId);
  if (!run || run.operation !== 'upgrade') return run;
  return (await db('incarnation_runs')
    .where({ incarnation: run.incarnation, status: 'succeeded', kind: 'run' })
    .whereNot('operation', 'upgrade')
    .where('created_at', '<', run.created_at)
    .orderBy('created_at', 'desc')
    .first()) as RunRecord | undefined;
}
