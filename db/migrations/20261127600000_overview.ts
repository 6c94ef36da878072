// The fleet overview (issue 35, GET /v1/overview) and natural order of names.
//   keeper_natural      an ICU collation with numeric ordering (`und-u-kn-true`): host2 < host10.
//                       Deterministic (PostgreSQL breaks ICU ties bytewise), so it is a total order
//                       and keyset paging over it neither skips nor repeats a row.
//   *_natural indexes   the list orders and keyset comparisons use `name collate keeper_natural`,
//                       so each list has an index in that order.
//   soul_status_changes one row per change of a soul's status, written by a trigger: the counts at
//                       any past moment are today's counts minus the changes since, so "connected
//                       over the last 24 h" and "the change over the last hour" need no sampler.
//                       Rows older than two days are pruned by the same trigger (the overview
//                       looks back one day).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create collation keeper_natural (provider = icu, locale = 'und-u-kn-true')`);
  await knex.raw('create index souls_sid_natural on souls (sid collate keeper_natural)');
  await knex.raw('create index incarnations_name_natural on incarnations (name collate keeper_natural)');
  await knex.raw('create index services_name_natural on services (name collate keeper_natural)');
  await knex.raw('create index archons_aid_natural on archons (aid collate keeper_natural)');
  await knex.raw("create index incarnation_runs_created_idx on incarnation_runs (created_at) where kind = 'run'");
  await knex.raw(`
    CREATE TABLE soul_status_changes (
      id bigserial PRIMARY KEY,
      at timestamptz NOT NULL DEFAULT now(),
      from_status text,
      to_status text
    );
    CREATE INDEX soul_status_changes_at ON soul_status_changes (at);

    CREATE FUNCTION souls_record_status() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO soul_status_changes (from_status, to_status) VALUES (NULL, NEW.status);
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO soul_status_changes (from_status, to_status) VALUES (OLD.status, NULL);
      ELSIF NEW.status IS DISTINCT FROM OLD.status THEN
        INSERT INTO soul_status_changes (from_status, to_status) VALUES (OLD.status, NEW.status);
      END IF;
      DELETE FROM soul_status_changes WHERE at < now() - interval '2 days';
      RETURN NULL;
    END $$;

    CREATE TRIGGER souls_record_status AFTER INSERT OR DELETE OR UPDATE OF status ON souls
      FOR EACH ROW EXECUTE FUNCTION souls_record_status();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER souls_record_status ON souls;
    DROP FUNCTION souls_record_status();
    DROP TABLE soul_status_changes;
    DROP INDEX incarnation_runs_created_idx;
    DROP INDEX archons_aid_natural;
    DROP INDEX services_name_natural;
    DROP INDEX incarnations_name_natural;
    DROP INDEX souls_sid_natural;
    DROP COLLATION keeper_natural;
  `);
}
