// A service's git credential by reference (issue 12, item 5): `secretstore:<path>#<field>`, resolved
// by the keeper for each clone only. The reference is not secret; the credential is stored nowhere here.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('services', (t) => {
    t.text('credential_ref');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('services', (t) => {
    t.dropColumn('credential_ref');
  });
}
