// A step whose `changed_when` overrode the module's answer says so (issue 31): run_steps.changed_when
// holds the expression when its verdict differed from what the soul's module answered (so `changed`
// is the expression's, and the module said the opposite); null when the module's answer stands.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.text('changed_when');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.dropColumn('changed_when');
  });
}
