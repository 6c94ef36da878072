// Gates between batches (issue 30): what a running run waits for.
//   incarnation_runs.waiting   {for: "health"|"approval", batch, health?, since} while the run's
//     workflow waits after a `serial:` batch for its `gate:` (health check or operator approval);
//     null otherwise. Shown by the run answer, its SSE stream and the /ui; the approve route answers
//     409 unless it says "approval".
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.jsonb('waiting');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.dropColumn('waiting');
  });
}
