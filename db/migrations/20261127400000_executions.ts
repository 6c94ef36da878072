// One-off executions (issue 34, docs/executions.md): one module run on a selection of hosts, outside
// any incarnation. `executions` is the request as asked (params hold secretstore() references only,
// never values) and its outcome; `execution_hosts` one row per host answer, numbered in commit
// order (`seq`, taken under a transaction-scoped advisory lock by db/repos/executions.ts) so the
// event stream can resume with Last-Event-ID without losing an answer.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE SEQUENCE execution_hosts_seq;
    CREATE TABLE executions (
      id text PRIMARY KEY,
      aid text NOT NULL,
      module text NOT NULL,
      params jsonb NOT NULL,
      target jsonb NOT NULL,
      sids text[] NOT NULL,
      dry_run boolean NOT NULL,
      timeout_ms integer NOT NULL,
      output_cap integer NOT NULL,
      batch integer NOT NULL,
      status text NOT NULL,
      summary jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz
    );
    CREATE INDEX executions_active ON executions (aid) WHERE status = 'running';
    CREATE TABLE execution_hosts (
      execution_id text NOT NULL REFERENCES executions(id) ON DELETE CASCADE,
      sid text NOT NULL,
      status text NOT NULL,
      changed boolean NOT NULL,
      output text NOT NULL,
      diff jsonb,
      started_at timestamptz,
      finished_at timestamptz,
      seq bigint NOT NULL,
      PRIMARY KEY (execution_id, sid)
    );
    CREATE INDEX execution_hosts_events ON execution_hosts (execution_id, seq);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE execution_hosts; DROP TABLE executions; DROP SEQUENCE execution_hosts_seq;');
}
