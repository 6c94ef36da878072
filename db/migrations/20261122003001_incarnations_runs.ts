// Incarnations (interface spec 2.4, 3.2) and their runs. The incarnation row holds the last
// committed, consistent state; a run never touches it until its single commit transaction.
//   incarnations          one row per incarnation; `status` is the lock (applying/ready/error_locked)
//   incarnation_runs      one row per apply_id (= Temporal workflow id): operation, input, outcome
//   run_plans             the rendered steps per host. Kept here, not in workflow histories, because
//                         rendered content may carry secrets and histories must not
//   run_hosts, run_steps  the run report: per host, per step
//   incarnation_history   one state snapshot per committed change, pointing at its run
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('incarnations', (t) => {
    t.text('name').primary();
    t.text('service').notNullable().references('name').inTable('services');
    t.specificType('covens', 'text[]').notNullable();
    t.jsonb('state').notNullable().defaultTo('{}');
    t.integer('state_schema_version');
    t.text('service_commit');
    t.text('status').notNullable();
    t.text('current_apply_id');
    t.text('last_apply_id');
    t.text('last_committed_apply_id');
    t.text('created_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `alter table incarnations add constraint incarnations_status_check check (status in ('applying','ready','error_locked'))`,
  );
  await knex.raw('create index incarnations_status_idx on incarnations (status)');
  await knex.raw('create index incarnations_service_idx on incarnations (service)');

  await knex.schema.createTable('incarnation_runs', (t) => {
    t.text('apply_id').primary();
    t.text('incarnation').notNullable().references('name').inTable('incarnations').onDelete('CASCADE');
    t.text('operation').notNullable();
    t.jsonb('input').notNullable().defaultTo('{}');
    t.text('status').notNullable();
    t.text('phase').notNullable();
    t.text('service_ref');
    t.text('service_commit');
    t.jsonb('render_errors');
    t.text('error');
    t.jsonb('state_changes');
    t.jsonb('orchestration');
    t.jsonb('summary');
    t.text('retry_of');
    t.text('created_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finished_at', { useTz: true });
  });
  await knex.raw(
    `alter table incarnation_runs add constraint incarnation_runs_status_check check (status in ('running','succeeded','failed'))`,
  );
  await knex.raw('create index incarnation_runs_incarnation_idx on incarnation_runs (incarnation, created_at)');

  await knex.schema.createTable('run_plans', (t) => {
    t.text('apply_id').notNullable().references('apply_id').inTable('incarnation_runs').onDelete('CASCADE');
    t.text('sid').notNullable();
    t.jsonb('steps').notNullable();
    t.jsonb('soulprint');
    t.primary(['apply_id', 'sid']);
  });

  await knex.schema.createTable('run_hosts', (t) => {
    t.text('apply_id').notNullable().references('apply_id').inTable('incarnation_runs').onDelete('CASCADE');
    t.text('sid').notNullable();
    t.text('status').notNullable();
    t.text('kid');
    t.text('reason');
    t.integer('batch');
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.primary(['apply_id', 'sid']);
  });

  await knex.schema.createTable('run_steps', (t) => {
    t.text('apply_id').notNullable().references('apply_id').inTable('incarnation_runs').onDelete('CASCADE');
    t.text('sid').notNullable();
    t.integer('step_index').notNullable();
    t.text('name');
    t.text('module').notNullable();
    t.text('status').notNullable();
    t.boolean('changed').notNullable().defaultTo(false);
    t.text('output').notNullable().defaultTo('');
    t.integer('attempts').notNullable().defaultTo(0);
    t.boolean('replayed').notNullable().defaultTo(false);
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.primary(['apply_id', 'sid', 'step_index']);
  });

  await knex.schema.createTable('incarnation_history', (t) => {
    t.bigIncrements('id').primary();
    t.text('incarnation').notNullable().references('name').inTable('incarnations').onDelete('CASCADE');
    t.text('apply_id').notNullable().references('apply_id').inTable('incarnation_runs');
    t.text('operation').notNullable();
    t.jsonb('state').notNullable();
    t.integer('state_schema_version');
    t.text('service_commit');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create index incarnation_history_incarnation_idx on incarnation_history (incarnation, id)');
}

export async function down(knex: Knex): Promise<void> {
  for (const t of ['incarnation_history', 'run_steps', 'run_hosts', 'run_plans', 'incarnation_runs', 'incarnations']) {
    await knex.schema.dropTable(t);
  }
}
