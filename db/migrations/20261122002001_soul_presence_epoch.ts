// The presence epoch of the stream that last wrote a soul's status. Status writes are fenced by it
// (hub/presence.ts): a late write from a superseded session or a slow keeper cannot overwrite what a
// newer session recorded.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('souls', (t) => {
    t.bigInteger('presence_epoch');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('souls', (t) => {
    t.dropColumn('presence_epoch');
  });
}
