// Certificate rotation (docs/certificates.md): the expiry of the soul's live certificate, and the
// certificate issued by a rotation that has not connected yet. The pending serial is admitted at the
// event stream beside the live one until its first handshake, which makes it the only live one; so a
// rotation cut off before the soul stored the new certificate leaves the soul a working identity.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('souls', (t) => {
    t.timestamp('cert_not_after', { useTz: true });
    t.text('cert_serial_pending');
    t.timestamp('cert_pending_not_after', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('souls', (t) => {
    t.dropColumn('cert_not_after');
    t.dropColumn('cert_serial_pending');
    t.dropColumn('cert_pending_not_after');
  });
}
