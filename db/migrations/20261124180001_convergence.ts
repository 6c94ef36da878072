// New hosts converge (issue 17, item 5): a run may be limited to some hosts (`target_sids`: the new
// soul of a converge run; null = every host of the covens), and a soul records when the keeper
// brought it to every `ready` incarnation of its covens (`converged_at`). Souls onboarded before this
// migration already took part in their incarnations' runs: they count as converged.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.specificType('target_sids', 'text[]');
  });
  await knex.schema.alterTable('souls', (t) => {
    t.timestamp('converged_at', { useTz: true });
  });
  await knex('souls').whereNotNull('onboarded_at').update({ converged_at: knex.fn.now() });
  await knex.raw(
    'create index incarnation_runs_target_sids on incarnation_runs using gin (target_sids) where target_sids is not null',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists incarnation_runs_target_sids');
  await knex.schema.alterTable('souls', (t) => {
    t.dropColumn('converged_at');
  });
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.dropColumn('target_sids');
  });
}
