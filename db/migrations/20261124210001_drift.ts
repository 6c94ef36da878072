// Drift checks (issue 17, item 4; docs/drift.md): an incarnation may be checked on a schedule. Each
// check is a plan of its last committed operation and input; a host where a step would change
// something no longer matches the committed state: it drifted.
//   drift_interval     null: no scheduled check; else a duration ("10m")
//   drift_auto_repair  a drifted check is applied at once (the plan, exactly)
//   drift_status       unchecked | in_sync | drifted | check_failed
//   drift_checked_at, drift_plan_id, drifted_sids: the last check, its plan, the hosts that drifted
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnations', (t) => {
    t.text('drift_interval');
    t.boolean('drift_auto_repair').notNullable().defaultTo(false);
    t.text('drift_status').notNullable().defaultTo('unchecked');
    t.timestamp('drift_checked_at', { useTz: true });
    t.text('drift_plan_id');
    t.specificType('drifted_sids', 'text[]').notNullable().defaultTo('{}');
  });
  await knex.raw(
    "alter table incarnations add constraint incarnations_drift_status check (drift_status in ('unchecked', 'in_sync', 'drifted', 'check_failed'))",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table incarnations drop constraint if exists incarnations_drift_status');
  await knex.schema.alterTable('incarnations', (t) => {
    for (const c of [
      'drift_interval',
      'drift_auto_repair',
      'drift_status',
      'drift_checked_at',
      'drift_plan_id',
      'drifted_sids',
    ])
      t.dropColumn(c);
  });
}
