// Secret inputs belong to one incarnation's lifetime (issue 28): values given to secret inputs are
// stored under <scenario_prefix>/incarnations/<name>/<secrets_key>/, where secrets_key is the
// apply_id of the run (or plan) that created the incarnation, so an incarnation made again with a
// deleted one's name starts with none of its secrets. Incarnations made before keep null: their
// values stay under <scenario_prefix>/incarnations/<name>/ as before (common/secret.ts).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnations', (t) => {
    t.text('secrets_key');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnations', (t) => {
    t.dropColumn('secrets_key');
  });
}
