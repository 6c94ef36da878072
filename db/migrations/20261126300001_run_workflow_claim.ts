// The apply_id fence (issue 28, item 7): a run belongs to one Temporal workflow execution.
//   incarnation_runs.workflow_run_id   the Temporal run id of the workflow execution that owns the
//     run: written by the keeper when it starts the workflow, or claimed by the workflow's first
//     activity (render, upgrade), whichever comes first; every other activity of any other
//     execution is refused (db/repos/run-lock.ts).
// Runs still running when this migration runs were started before the fence: they are marked
// LEGACY_CLAIM so the first activity of their own workflow (workflow id = apply_id) claims them.
// incarnation_runs_running_idx: every keeper's run watch (runs/run-watch.ts) reads the running runs
// every 2 s; a partial index keeps that read small however many runs have ended.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.text('workflow_run_id');
  });
  await knex('incarnation_runs').where({ status: 'running' }).update({ workflow_run_id: 'legacy:unclaimed' });
  await knex.raw("create index incarnation_runs_running_idx on incarnation_runs (created_at) where status = 'running'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists incarnation_runs_running_idx');
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.dropColumn('workflow_run_id');
  });
}
