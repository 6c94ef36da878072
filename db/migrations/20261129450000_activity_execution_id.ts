// An execution's activity row names the execution (issue 45): `execution_id` is the one-off execution
// the call started (POST /v1/executions, MCP start-execution), as `apply_id` names a run or plan;
// null for every other row.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('activity', (t) => {
    t.text('execution_id');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('activity', (t) => {
    t.dropColumn('execution_id');
  });
}
