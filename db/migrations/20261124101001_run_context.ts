// What a run's apply-time expressions and report need beyond what the first schema kept:
//   incarnation_runs.rendered_input  the input as render resolved it (defaults filled in), so
//                                    `failed_when: input.x` at dispatch sees what the templates saw;
//                                    `input` stays the operator's own input (what a later run with
//                                    no input inherits)
//   run_steps.skip_reason            why a step did not run on a host: on, where, when, require,
//                                    onchanges, earlier_failure, secret_unavailable (the run report
//                                    shows every step)
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.jsonb('rendered_input');
  });
  await knex.schema.alterTable('run_steps', (t) => {
    t.text('skip_reason');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.dropColumn('skip_reason');
  });
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.dropColumn('rendered_input');
  });
}
