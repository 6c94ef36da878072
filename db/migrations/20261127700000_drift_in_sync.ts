// Drift checks that find nothing (issues 31 and 36): an in-sync check keeps no plan of its own once
// a later check is recorded, only a count and the time of the last one, so a fleet checked every
// few minutes does not write a whole plan per tick into the database for retention to delete later.
//   drift_checks_in_sync  how many checks found every host as committed (never reset)
//   drift_in_sync_at      when the last of them ended
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnations', (t) => {
    t.integer('drift_checks_in_sync').notNullable().defaultTo(0);
    t.timestamp('drift_in_sync_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnations', (t) => {
    t.dropColumn('drift_in_sync_at');
    t.dropColumn('drift_checks_in_sync');
  });
}
