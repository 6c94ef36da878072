// Plans (issue 17, items 2 and 3; docs/plans.md). A plan is recorded like a run, in
// incarnation_runs with kind 'plan', so render, the per-host plans, the report tables and the event
// numbering serve both; every list of runs filters kind 'run'.
//   kind          'run' | 'plan'
//   plan_id       on a run: the plan it applies (its steps are the plan's, never rendered again)
//   plan_base     on a plan: the incarnation's last committed run when the plan was made; the plan
//                 can be applied only while that is still the last commit
//   expires_at    on a plan: after this it can be read, not applied
//   applied_by    on a plan: the run that applied it (a plan is applied at most once)
//   plan_target   on a plan for a create: {service, covens, version} of the incarnation it would make
//                 (no incarnation row exists until the plan is applied)
//   plan_upgrade  on a plan of an upgrade: {version, from_version, to_version} and, once rendered,
//                 the migrations it would run and the state before and after them
//   run_steps.diff  what the step changed or, in a plan, would change (the soul's description)
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('incarnation_runs', (t) => {
    t.text('kind').notNullable().defaultTo('run');
    t.text('plan_id');
    t.text('plan_base');
    t.timestamp('expires_at', { useTz: true });
    t.text('applied_by');
    t.jsonb('plan_target');
    t.jsonb('plan_upgrade');
  });
  await knex.raw("alter table incarnation_runs add constraint incarnation_runs_kind check (kind in ('run', 'plan'))");
  await knex.raw(
    "create index incarnation_runs_plans on incarnation_runs (incarnation, created_at desc) where kind = 'plan'",
  );
  await knex.schema.alterTable('run_steps', (t) => {
    t.jsonb('diff');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('run_steps', (t) => {
    t.dropColumn('diff');
  });
  await knex.raw('drop index if exists incarnation_runs_plans');
  await knex.raw('alter table incarnation_runs drop constraint if exists incarnation_runs_kind');
  await knex.schema.alterTable('incarnation_runs', (t) => {
    for (const c of ['kind', 'plan_id', 'plan_base', 'expires_at', 'applied_by', 'plan_target', 'plan_upgrade'])
      t.dropColumn(c);
  });
}
