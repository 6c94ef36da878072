// No secret in any diff or hash (issue 28; docs/secrets.md "Diffs and hashes").
//   run_steps.path    the file the step manages (its params' path); null for a step without one
//   run_steps.secret  the step's params carried a secret: with path, what tells a later plan that
//                     the file may hold one (db/repos/step-secrets.ts)
// Both are filled in for the rows already stored, from the plans they ran (a secret was a marker
// `«secret:...»` in the stored params). Then what already leaked is purged (purgeLeakedDiffs):
// - the diffs of steps that carried a secret, and of every later step (run or plan) of the same
//   path on the same host: a later plan of it showed the file's old content, the secret;
// - every plain content SHA-256 left in a diff (only keyed digests are kept from now on: a plain
//   hash of a file holding a secret confirms a guessed value offline);
// - the details of drift refusals (`drift since plan ...: the plan saw {diff}, now {diff}`), which
//   quoted those diffs into run_hosts.reason.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.text('path');
    t.boolean('secret').notNullable().defaultTo(false);
  });
  await knex.raw('create index run_steps_sid_path on run_steps (sid, path) where path is not null');
  // The step of each row is found by its index, not its place in the array.
  await knex.raw(`
    update run_steps s set
      path = case when st.params ->> 'path' like '/%'
        then regexp_replace(regexp_replace(regexp_replace(st.params ->> 'path', '/(\\./)+', '/', 'g'), '/{2,}', '/', 'g'), '(.)/$', '\\1')
        else null end,
      secret = st.params::text like '%«secret:%'
    from (
      select p.apply_id, p.sid, (e ->> 'index')::int as step_index, e -> 'params' as params
      from run_plans p, jsonb_array_elements(p.steps) e
    ) st
    where st.apply_id = s.apply_id and st.sid = s.sid and st.step_index = s.step_index`);
  await purgeLeakedDiffs(knex);
}

/** Clears what the keeper stored before it kept diffs without secrets (see the header). */
export async function purgeLeakedDiffs(knex: Knex): Promise<void> {
  await knex.raw('update run_steps set diff = null where secret and diff is not null');
  await knex.raw(`
    with first_secret as (
      select s.sid, s.path, min(r.created_at) as since from run_steps s join incarnation_runs r on r.apply_id = s.apply_id
      where s.secret and s.path is not null group by s.sid, s.path)
    update run_steps s set diff = null
    from incarnation_runs r, first_secret f
    where r.apply_id = s.apply_id and f.sid = s.sid and f.path = s.path and r.created_at >= f.since and s.diff is not null`);
  await knex.raw(`
    update run_steps set diff = diff #- '{content,before,sha256}' #- '{content,after,sha256}'
    where jsonb_typeof(diff -> 'content') = 'object'`);
  await knex.raw(`
    update run_hosts set reason = regexp_replace(reason, '^(drift since plan [^:]*): .*$',
      '\\1: the host no longer matched the plan (the details were removed: they could show a secret); nothing was applied on this host')
    where reason like 'drift since plan %: %'`);
}

export async function down(knex: Knex): Promise<void> {
  // What was purged stays purged.
  await knex.raw('drop index if exists run_steps_sid_path');
  await knex.schema.alterTable('run_steps', (t) => {
    t.dropColumn('path');
    t.dropColumn('secret');
  });
}
