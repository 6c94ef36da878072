// Push mode over SSH (issue 15): a soul with transport `ssh` has no stream and no certificate. Its
// connection settings are one block (`ssh`: address, port, user, pinned host key, the reference of
// the private key in the secrets store, sudo, trust_on_first_use); the key itself is stored nowhere
// here. `last_contact_at` / `last_error` are its presence: the last successful connection and the
// last failure, written by dispatch and by POST /v1/souls/{sid}/check.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('souls', (t) => {
    t.jsonb('ssh');
    t.timestamp('last_contact_at', { useTz: true });
    t.text('last_error');
  });
  await knex.raw(
    `alter table souls add constraint souls_ssh_transport_check check ((transport = 'ssh') = (ssh is not null))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table souls drop constraint souls_ssh_transport_check');
  await knex.schema.alterTable('souls', (t) => {
    t.dropColumn('ssh');
    t.dropColumn('last_contact_at');
    t.dropColumn('last_error');
  });
}
