// Each host outcome of a run gets an event number, so run progress can be streamed and resumed
// (GET /v1/incarnations/{name}/runs/{apply_id}/events with Last-Event-ID) without losing an event.
//
// The number must follow commit order, or a reader could see event 11 before event 10 commits and
// then resume past 10. A statement-level trigger takes one transaction-scoped advisory lock before
// any row of run_hosts is written, so writers to run_hosts commit one after another; the row-level
// trigger then numbers each host whose outcome changed. Whoever sees number N also sees every number
// below N. The lock is held only by the short transactions that record host outcomes.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE SEQUENCE run_hosts_event_seq;
    ALTER TABLE run_hosts ADD COLUMN event_seq bigint;
    CREATE INDEX run_hosts_events ON run_hosts (apply_id, event_seq);

    CREATE FUNCTION run_hosts_serialize() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('keeper.run_hosts.events'));
      RETURN NULL;
    END $$;

    CREATE FUNCTION run_hosts_number() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.status <> 'pending' AND (TG_OP = 'INSERT' OR NEW.status IS DISTINCT FROM OLD.status) THEN
        NEW.event_seq := nextval('run_hosts_event_seq');
      ELSIF TG_OP = 'UPDATE' THEN
        NEW.event_seq := OLD.event_seq;
      END IF;
      RETURN NEW;
    END $$;

    CREATE TRIGGER run_hosts_serialize BEFORE INSERT OR UPDATE ON run_hosts
      FOR EACH STATEMENT EXECUTE FUNCTION run_hosts_serialize();
    CREATE TRIGGER run_hosts_number BEFORE INSERT OR UPDATE ON run_hosts
      FOR EACH ROW EXECUTE FUNCTION run_hosts_number();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER run_hosts_number ON run_hosts;
    DROP TRIGGER run_hosts_serialize ON run_hosts;
    DROP FUNCTION run_hosts_number();
    DROP FUNCTION run_hosts_serialize();
    DROP INDEX run_hosts_events;
    ALTER TABLE run_hosts DROP COLUMN event_seq;
    DROP SEQUENCE run_hosts_event_seq;
  `);
}
