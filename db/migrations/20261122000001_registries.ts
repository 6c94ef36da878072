// Operators, souls, bootstrap tokens and the service catalog.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('archons', (t) => {
    t.text('aid').primary();
    t.text('role').notNullable();
    t.text('created_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('souls', (t) => {
    t.text('sid').primary();
    t.text('transport').notNullable();
    t.specificType('covens', 'text[]').notNullable().defaultTo('{}');
    t.text('status').notNullable().defaultTo('pending');
    t.jsonb('soulprint');
    t.timestamp('last_seen_at', { useTz: true });
    t.text('connected_kid');
    t.text('cert_serial');
    t.timestamp('onboarded_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `alter table souls add constraint souls_status_check check (status in ('pending','connected','disconnected'))`,
  );
  await knex.raw('create index souls_covens_gin on souls using gin (covens)');
  await knex.raw('create index souls_status_idx on souls (status)');
  await knex.schema.createTable('bootstrap_tokens', (t) => {
    t.bigIncrements('id').primary();
    t.text('sid').notNullable().references('sid').inTable('souls').onDelete('CASCADE');
    t.binary('token_hash').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.text('used_reason');
  });
  // At most one active (unused) token per host, enforced by the database itself.
  await knex.raw('create unique index bootstrap_tokens_one_active on bootstrap_tokens (sid) where used_at is null');
  await knex.schema.createTable('services', (t) => {
    t.text('name').primary();
    t.text('git').notNullable();
    t.text('ref').notNullable();
    t.text('created_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('services');
  await knex.schema.dropTable('bootstrap_tokens');
  await knex.schema.dropTable('souls');
  await knex.schema.dropTable('archons');
}
