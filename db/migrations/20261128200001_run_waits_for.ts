// An operator's run that waits for a converge run (issue 30, "New hosts in one run"): instead of a
// 409 while the converger's run holds the incarnation's lock, the operator's run is recorded with
// `waits_for` = that converge run's apply_id; when the converge run ends, the lock passes to it in
// the same transaction (db/repos/run-queue.ts). The column stays set afterwards: the run report
// says what the run waited for.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.text('waits_for');
  });
  // At most one run waits for a given run: a second operator's run is refused (409), that is the lock.
  await knex.raw(
    "create unique index incarnation_runs_one_waiter on incarnation_runs (waits_for) where waits_for is not null and status = 'running'",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists incarnation_runs_one_waiter');
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.dropColumn('waits_for');
  });
}
