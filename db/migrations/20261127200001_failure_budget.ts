// The failure budget (issue 30): a run may end with some hosts failed or unknown and still commit.
//   incarnation_runs.max_failed   the operator's budget for this run ("2" or "5%"), within the
//     scenario's `max_failed:`; null: the scenario's own.
//   incarnation_pending_hosts     per incarnation, the hosts its committed state has not reached yet:
//     failed or unknown in a run that committed within its budget. The converger brings them in
//     (runs them alone, as a new host) and a run that applies to them removes them. `reason` is the
//     host's reason in that run; `apply_id` the run that left it pending; `epoch` the soul's presence
//     epoch then: the converger retries the host once the soul holds a newer stream (it came back),
//     not every second while a host that fails for its own reasons stays connected.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.text('max_failed');
  });
  await knex.schema.createTable('incarnation_pending_hosts', (t) => {
    t.text('incarnation').notNullable().references('name').inTable('incarnations').onDelete('CASCADE');
    t.text('sid').notNullable();
    t.text('apply_id').notNullable();
    t.text('status').notNullable();
    t.text('reason');
    t.bigInteger('epoch');
    t.timestamp('since', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['incarnation', 'sid']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('incarnation_pending_hosts');
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.dropColumn('max_failed');
  });
}
