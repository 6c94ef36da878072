// keeperctl incarnations plan|plans|plan-report|apply-plan (docs/plans.md): make a plan and show
// what it would change, list an incarnation's plans, show one, and apply exactly one of them.
// `run --plan` is plan, show, ask and apply in one command; these are the steps on their own, for a
// plan reviewed by someone else, applied later, or made by a drift check.
import type { Argv } from 'yargs';
import { type Ctx, listAll } from '../context';
import { CliError, ExitCode } from '../errors';
import { inputModeBody, keptLine, parseInput, replaceInputOption } from '../input';
import { table } from '../output';
import { nextSteps, planText, type Plan } from '../plan-view';
import { confirm } from '../prompt';
import { afterAccepted } from './accepted';
import type { Handler } from './types';

/** POST .../plans, then the plan once every host answered its check. */
export async function makePlan(
  ctx: Ctx,
  name: string,
  operation: string,
  input: Record<string, unknown> | undefined,
  replace = false,
  version?: string,
  create: { service?: string; covens?: string[] } = {},
): Promise<Plan> {
  const accepted = (
    await ctx.client().call('createPlan', {
      params: { name },
      body: {
        operation,
        ...(input ? { input } : {}),
        ...inputModeBody(replace),
        ...(version !== undefined ? { version } : {}),
        ...(create.service !== undefined ? { service: create.service } : {}),
        ...(create.covens !== undefined ? { covens: create.covens } : {}),
      },
    })
  ).body as { plan_id: string };
  const plan = await readPlan(ctx, name, accepted.plan_id, true);
  const kept = keptLine(input, (plan as { input?: Record<string, unknown> }).input);
  if (kept) ctx.note(kept);
  return plan;
}

/** GET .../plans/{plan_id}; with `wait`, held by the keeper (30 s at a time) until no host is still being checked. */
async function readPlan(ctx: Ctx, name: string, planId: string, wait: boolean): Promise<Plan> {
  for (;;) {
    const plan = (
      await ctx
        .client()
        .call('getPlan', { params: { name, plan_id: planId }, ...(wait ? { query: { wait: '30s' } } : {}) })
    ).body as Plan;
    if (!wait || plan.status !== 'planning') return plan;
  }
}

const planColumns = [
  { header: 'PLAN ID', value: (p: any) => p.plan_id },
  { header: 'OPERATION', value: (p: any) => p.operation },
  { header: 'STATUS', value: (p: any) => p.status },
  { header: 'WOULD CHANGE', value: (p: any) => p.summary?.would_change ?? null },
  { header: 'CREATED', value: (p: any) => p.created_at },
  { header: 'EXPIRES', value: (p: any) => p.expires_at },
  { header: 'APPLIED BY', value: (p: any) => p.applied_by },
];

export function planCommands(y: Argv, run: Handler): Argv {
  return y
    .command(
      'plan <name> <operation>',
      'plan an operation: check every host, change nothing, show what would change',
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true, describe: 'the incarnation' })
          .positional('operation', {
            type: 'string',
            demandOption: true,
            describe: 'the operation to plan (scenario/<operation>/main.yml)',
          })
          .option('input', {
            type: 'string',
            array: true,
            describe: 'input value key=value (repeatable; merged over the last committed input)',
          })
          .option('input-file', {
            type: 'string',
            describe: 'YAML/JSON file with the input mapping (--input values go on top)',
          })
          .option('replace-input', replaceInputOption)
          // --version names the service version (as in upgrade): keeperctl's own --version is off here.
          .version(false)
          .option('version', {
            type: 'string',
            describe:
              'with operation upgrade: the published version to move to; with --service: the version to create with (default: the newest published; keeperctl services versions <service>)',
          })
          // The plan of a create: the incarnation does not exist yet, so it needs what `create` needs.
          .option('service', {
            type: 'string',
            describe: 'plan the create of an incarnation that does not exist yet: the catalog service',
          })
          .option('coven', {
            type: 'string',
            array: true,
            describe: 'with --service: a coven of the incarnation to make (repeatable)',
          })
          .example(
            '$0 incarnations plan motd-demo create --input message=hello',
            'per host what would change; then apply it with apply-plan',
          )
          .example(
            '$0 incarnations plan motd-new create --service motd --coven edge --input message=hi',
            'the plan of a create: nothing exists until apply-plan creates the incarnation with exactly this plan',
          )
          .example(
            '$0 incarnations plan motd-demo upgrade --version v2',
            'the migrations, the state before and after, and what v2 would change on the hosts',
          ),
      run(async (ctx, a) => {
        if ((a.service === undefined) !== (a.coven === undefined))
          throw new CliError(
            ExitCode.Usage,
            '--service and --coven go together: the plan of a create needs both',
            `for example: keeperctl incarnations plan ${a.name} create --service <service> --coven <coven>`,
          );
        const plan = await makePlan(
          ctx,
          a.name,
          a.operation,
          parseInput(a.input, a['input-file']),
          a['replace-input'],
          a.version,
          { service: a.service, covens: a.coven },
        );
        ctx.show(plan, () => planText(plan) + nextSteps(plan));
        // A plan that cannot be applied is what this command drove failing: exit 1, as a failed run.
        if (plan.status === 'failed') process.exitCode = ExitCode.Failed;
      }),
    )
    .command(
      'plans <name>',
      "list an incarnation's plans, newest first",
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true, describe: 'the incarnation' })
          .option('all', { type: 'boolean', default: false, describe: 'follow the cursors to the last page' })
          .option('limit', { type: 'number', describe: 'page size' })
          .example('$0 incarnations plans motd-demo', 'each plan with its status and how many steps would change'),
      run(async (ctx, a) => {
        const page = await listAll(ctx, 'listPlans', { limit: a.limit }, a.all, { name: a.name });
        ctx.show(page, () => table(page.items, planColumns) + (page.next_cursor ? '(more: --all)\n' : ''));
      }),
    )
    .command(
      'plan-report <name> <plan_id>',
      'show one plan: per host each step that would change, with its diff (waits while hosts are checked)',
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true, describe: 'the incarnation' })
          .positional('plan_id', {
            type: 'string',
            demandOption: true,
            describe: 'from incarnations plans, or the drift.plan_id of incarnations get',
          })
          .example(
            '$0 incarnations plan-report motd-demo motd-demo.create.drift.mi3x2k',
            'what the last drift check found',
          ),
      run(async (ctx, a) => {
        const plan = await readPlan(ctx, a.name, a.plan_id, true);
        ctx.show(plan, () => planText(plan) + nextSteps(plan));
      }),
    )
    .command(
      'apply-plan <name> <plan_id>',
      'apply exactly a plan made before (hosts that changed since are refused), and follow the run',
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true, describe: 'the incarnation' })
          .positional('plan_id', {
            type: 'string',
            demandOption: true,
            describe: 'from keeperctl incarnations plan, or plans',
          })
          .option('yes', { type: 'boolean', default: false, describe: 'do not ask' })
          .option('follow', {
            type: 'boolean',
            default: true,
            describe: 'follow the run until it ends (--no-follow returns at once)',
          })
          .example(
            '$0 incarnations apply-plan motd-demo motd-demo.create.plan.mi3x2k --yes',
            'apply a reviewed plan, following progress',
          ),
      run(async (ctx, a) => {
        // Shown before the question: what is confirmed is this plan, not an operation by name.
        const plan = await readPlan(ctx, a.name, a.plan_id, false);
        if (ctx.format === 'table') ctx.note(planText(plan));
        if (plan.upgrade) {
          throw new CliError(
            ExitCode.Conflict,
            `plan ${plan.plan_id} previews an upgrade to ${plan.upgrade.version}; it is not applied as such`,
            `keeperctl incarnations upgrade ${a.name} --version ${plan.upgrade.version}, then keeperctl run ${a.name} ${plan.upgrade.operation ?? '<operation>'}`,
          );
        }
        if (plan.status !== 'ready') {
          throw new CliError(
            ExitCode.Conflict,
            `plan ${plan.plan_id} is ${plan.status}; only a ready plan can be applied`,
            `make a fresh plan: keeperctl incarnations plan ${a.name} ${plan.operation}`,
          );
        }
        await confirm(ctx, a.yes, `apply exactly plan ${plan.plan_id} to ${a.name}?`);
        const accepted = (
          await ctx.client().call('startRun', { params: { name: a.name }, body: { plan_id: plan.plan_id } })
        ).body;
        await afterAccepted(ctx, a.name, accepted, a.follow);
      }),
    );
}
