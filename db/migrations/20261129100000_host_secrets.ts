// One secret boundary for every output of a host (issue 45, H-1 and H-3; docs/secrets.md).
//   soul_secrets        the secrets the keeper sent each host (store path and field, never a value),
//                       by runs, plans, drift checks and executions alike: every later output of that
//                       host is scrubbed of their values, whichever step or execution printed them.
//   executions.path     the file the execution's module manages (its params' path), canonical
//   executions.secret   the execution's params held a secretstore: reference
// With path and secret an execution taints and untaints a path exactly as a run step does
// (db/repos/step-secrets.ts). The rows already stored are filled in from their params.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE soul_secrets (
      sid text NOT NULL,
      path text NOT NULL,
      field text NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (sid, path, field)
    )`);
  await knex.schema.alterTable('executions', (t) => {
    t.text('path');
    t.boolean('secret').notNullable().defaultTo(false);
  });
  await knex.raw(`
    update executions set
      path = case when params ->> 'path' like '/%'
        then regexp_replace(regexp_replace(regexp_replace(params ->> 'path', '/(\\./)+', '/', 'g'), '/{2,}', '/', 'g'), '(.)/$', '\\1')
        else null end,
      secret = params::text like '%"secretstore:%'`);
  await knex.raw('create index execution_hosts_sid on execution_hosts (sid)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists execution_hosts_sid');
  await knex.schema.alterTable('executions', (t) => {
    t.dropColumn('path');
    t.dropColumn('secret');
  });
  await knex.raw('DROP TABLE soul_secrets');
}
