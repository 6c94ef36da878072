// Revocation (POST /v1/souls/{sid}/revoke): a revoked soul keeps its record, shows `revoked`, and
// is refused at the event stream until it is onboarded again with a forced bootstrap token.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('souls', (t) => {
    t.timestamp('revoked_at', { useTz: true });
  });
  await knex.raw('alter table souls drop constraint souls_status_check');
  await knex.raw(
    `alter table souls add constraint souls_status_check check (status in ('pending','connected','disconnected','revoked'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`update souls set status = 'disconnected' where status = 'revoked'`);
  await knex.raw('alter table souls drop constraint souls_status_check');
  await knex.raw(
    `alter table souls add constraint souls_status_check check (status in ('pending','connected','disconnected'))`,
  );
  await knex.schema.alterTable('souls', (t) => {
    t.dropColumn('revoked_at');
  });
}
