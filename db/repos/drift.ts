// Drift checks of an incarnation (docs/drift.md): the schedule's settings and the last check's
// outcome, on the incarnation's row. The check itself is a plan (db/repos/plans.ts). A check that
// found every host in sync is worth only a count and a time once a later check is recorded: its
// plan is deleted then (dropInSyncPlan), so the database holds one in-sync plan per incarnation at
// most, not one per tick. A check that found drift or failed keeps its plan for retention.plans.
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
  await db.transaction(async (trx) => {
    const before = (await trx('incarnations')
      .select('drift_status', 'drift_plan_id')
      .where({ name })
      .forUpdate()
      .first()) as { drift_status: DriftStatus; drift_plan_id: string | null } | undefined;
    if (!before) throw new RepoNotFound(`incarnation ${name} does not exist`);
    await trx('incarnations')
      .where({ name })
      .update({
        drift_interval: settings.interval,
        drift_auto_repair: settings.autoRepair,
        updated_at: trx.fn.now(),
        // Turned off: the last outcome is not a statement about now any more (the count of checks
        // in sync and the last one's time stay: they are history).
        ...(settings.interval === null
          ? { drift_status: 'unchecked', drifted_sids: [], drift_plan_id: null, drift_checked_at: null }
          : {}),
      });
    if (settings.interval === null && before.drift_status === 'in_sync' && before.drift_plan_id)
      await dropInSyncPlan(trx, before.drift_plan_id);
  });
}

/**
 * Records a check's outcome on the incarnation. Nothing is recorded when checks were turned off
 * meanwhile, or when this plan is recorded already (the activity retried after a lost answer: the
 * count must not grow twice). The previous check's plan is deleted when that check was in sync.
 */
export async function recordDrift(
  db: Knex,
  name: string,
  outcome: { status: DriftStatus; planId: string; drifted: string[] },
): Promise<void> {
  const recorded = await db.transaction(async (trx) => {
    const before = (await trx('incarnations')
      .select('drift_status', 'drift_plan_id')
      .where({ name })
      .whereNotNull('drift_interval')
      .forUpdate()
      .first()) as { drift_status: DriftStatus; drift_plan_id: string | null } | undefined;
    const inSync = outcome.status === 'in_sync';
    // Checks turned off while this one ran: an in-sync plan nobody will be shown is not kept either.
    if (!before) {
      if (inSync) await dropInSyncPlan(trx, outcome.planId);
      return false;
    }
    if (before.drift_plan_id === outcome.planId && before.drift_status === outcome.status) return false;
    await trx('incarnations')
      .where({ name })
      .update({
        drift_status: outcome.status,
        drift_plan_id: outcome.planId,
        drifted_sids: outcome.drifted,
        drift_checked_at: trx.fn.now(),
        ...(inSync
          ? { drift_checks_in_sync: trx.raw('drift_checks_in_sync + 1'), drift_in_sync_at: trx.fn.now() }
          : {}),
      });
    if (before.drift_status === 'in_sync' && before.drift_plan_id && before.drift_plan_id !== outcome.planId)
      await dropInSyncPlan(trx, before.drift_plan_id);
    return true;
  });
  // A check that found drift (or could not check) is worth a row of the activity stream; one that
  // found everything in sync changed nothing and would only fill it at every tick.
  if (recorded && (outcome.status === 'drifted' || outcome.status === 'check_failed')) {
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

/**
 * Deletes an in-sync check's plan (its hosts, rendered steps and step rows go with it, ON DELETE
 * CASCADE) unless something still needs it: an operator applied it (a run reads the plan's
 * steps), or an incarnation's state or history refers to it (the same guard as retention).
 */
async function dropInSyncPlan(trx: Knex.Transaction, planId: string): Promise<void> {
  await trx.raw(
    `
    delete from incarnation_runs r
    where r.apply_id = ? and r.kind = 'plan' and r.status <> 'running' and r.applied_by is null
      and not exists (select 1 from incarnations i where r.apply_id in (i.current_apply_id, i.last_apply_id, i.last_committed_apply_id, i.drift_plan_id))
      and not exists (select 1 from incarnation_history h where h.apply_id = r.apply_id)`,
    [planId],
  );
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
