// Revoking one operator token by its id (issue 31, "Remove and revoke"): POST
// /v1/archons/{aid}/revoke-tokens {"jti"} refuses that token only, at every keeper, from the next
// request on (each request reads its operator's revoked ids with its role). A row is kept until the
// longest-lived token the keeper issues would have expired (`keep_until`); after that the token is
// refused for its age anyway, so the row is pruned. Removing the operator removes its rows.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('revoked_tokens', (t) => {
    t.text('jti').primary();
    t.text('aid').notNullable().references('aid').inTable('archons').onDelete('CASCADE');
    t.timestamp('revoked_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('keep_until', { useTz: true }).notNullable();
    t.index(['aid']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('revoked_tokens');
}
