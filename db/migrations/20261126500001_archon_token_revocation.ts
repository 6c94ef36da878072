// Operator token revocation (issue 31, "Remove and revoke"): archons.tokens_valid_after is the
// moment before which every token of the operator is refused (a token's `iat` is compared with it on
// every request, by every keeper). Null: no token of the operator was ever revoked.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('archons', (t) => {
    t.timestamp('tokens_valid_after', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('archons', (t) => {
    t.dropColumn('tokens_valid_after');
  });
}
