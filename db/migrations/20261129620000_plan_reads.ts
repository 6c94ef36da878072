// What a host's render read of its facts (issue 47, docs/plans.md): a plan is stale on a host only
// when one of those facts changed. Null on plans and runs rendered before it was recorded: every
// fact is compared for those, as before.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_plans', (t) => {
    t.jsonb('reads');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_plans', (t) => {
    t.dropColumn('reads');
  });
}
