// Per-host input (issue 47): an incarnation's input for some hosts, by sid and by coven, merged over
// its input for those hosts (docs/incarnations.md "Per-host input"). `incarnations.host_input` is
// what the operator set; every run and plan records the copy it started with
// (`incarnation_runs.host_input`), so a later change never alters what an earlier run rendered, and
// each rendered host keeps the overrides it got (`run_plans.host_input`), which its plan shows and
// its apply-time expressions see. Secret inputs are references there, never values.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnations', (t) => {
    t.jsonb('host_input');
  });
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.jsonb('host_input');
  });
  await knex.schema.alterTable('run_plans', (t) => {
    t.jsonb('host_input');
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['run_plans', 'incarnation_runs', 'incarnations'])
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('host_input');
    });
}
