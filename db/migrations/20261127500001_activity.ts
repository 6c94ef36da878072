// The activity stream (issue 31, "An activity stream"): one append-only row per change made through
// the API, MCP, the converger or a drift check/repair: who (actor, its token's jti), from where,
// through what (route or tool), to what, with which outcome, and the run or plan it started.
// Nothing of a request's body is kept: targets are names, so no secret can land here.
// `id` is the keyset order (newest = highest); rows are only ever inserted, and removed by retention.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('activity', (t) => {
    t.bigIncrements('id').primary();
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('actor').notNullable();
    t.text('actor_kind').notNullable();
    t.text('jti');
    t.text('source');
    t.text('via').notNullable();
    t.text('action').notNullable();
    t.text('target');
    t.integer('status').notNullable();
    t.text('apply_id');
    t.index(['actor', 'id']);
    t.index(['target', 'id']);
    t.index(['at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('activity');
}
