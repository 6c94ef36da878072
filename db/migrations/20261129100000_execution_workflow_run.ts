// The execution fence (issue 45 M-2, runs/activities/execution-fence.ts): the Temporal run id of the
// execution's own workflow, recorded when the API starts it (or claimed by its first activity, for an
// execution started before this column existed). A workflow started by anyone else, even with the same
// workflow id after the execution's own ended, has another run id and is refused by every activity.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('executions', (t) => {
    t.text('workflow_run_id');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('executions', (t) => {
    t.dropColumn('workflow_run_id');
  });
}
