// Versions and the end of an incarnation (issue 17 items 1 and 6).
//   service_versions           the refs an operator published per service, each pinned to the commit it
//                              resolved to at publishing: runs apply that commit, never what a branch
//                              or a moved tag points at later
//   incarnations.service_version  the version the incarnation runs with (set at create, moved by upgrade)
//   incarnation_tombstones     deleted incarnations: the row leaves `incarnations` (the name is free
//                              again) and is kept here; runs and history stay readable, so their
//                              foreign keys to `incarnations` go (they outlive the incarnation)
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('service_versions', (t) => {
    t.text('service').notNullable().references('name').inTable('services').onDelete('CASCADE');
    t.text('version').notNullable();
    t.text('commit').notNullable();
    t.integer('state_schema_version').notNullable();
    t.text('published_by');
    t.timestamp('published_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['service', 'version']);
  });
  await knex.schema.alterTable('incarnations', (t) => {
    t.text('service_version');
  });
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.dropForeign(['incarnation']);
  });
  await knex.schema.alterTable('incarnation_history', (t) => {
    t.dropForeign(['incarnation']);
  });
  await knex.schema.createTable('incarnation_tombstones', (t) => {
    t.bigIncrements('id').primary();
    t.text('name').notNullable();
    t.text('service').notNullable();
    t.specificType('covens', 'text[]').notNullable();
    t.jsonb('state').notNullable();
    t.integer('state_schema_version');
    t.text('service_version');
    t.text('service_commit');
    t.text('deleted_apply_id');
    t.text('deleted_by');
    t.boolean('forced').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('deleted_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create index incarnation_tombstones_name_idx on incarnation_tombstones (name, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('incarnation_tombstones');
  await knex('incarnation_history').whereNotIn('incarnation', knex('incarnations').select('name')).delete();
  await knex('incarnation_runs').whereNotIn('incarnation', knex('incarnations').select('name')).delete();
  await knex.schema.alterTable('incarnation_history', (t) => {
    t.foreign('incarnation').references('name').inTable('incarnations').onDelete('CASCADE');
  });
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.foreign('incarnation').references('name').inTable('incarnations').onDelete('CASCADE');
  });
  await knex.schema.alterTable('incarnations', (t) => {
    t.dropColumn('service_version');
  });
  await knex.schema.dropTable('service_versions');
}
