// keeperctl incarnations list|create|get|history|run-report|unlock|upgrade, and the top-level `run`;
// runs, plan/plans/apply-plan, drift and delete are in files of their own beside this one.
import type { Argv } from 'yargs';
import { type Ctx, listAll } from '../context';
import { CliError, ExitCode } from '../errors';
import { followRun, type RunReport } from '../follow';
import { incarnationDetails, incarnationTable } from '../incarnation-view';
import { hostInputOptions, inputModeBody, keptLine, parseHostInput, parseInput, replaceInputOption } from '../input';
import { table } from '../output';
import { planText } from '../plan-view';
import { confirm } from '../prompt';
import { afterAccepted, finish, followOptions } from './accepted';
import { deleteCommand } from './incarnation-delete';
import { approveCommand } from './incarnation-approve';
import { cancelCommand } from './incarnation-cancel';
import { runsCommand } from './incarnation-runs';
import { driftCommand } from './drift';
import { makePlan, planCommands } from './plans';
import type { Handler } from './types';

export function runCommand(y: Argv): Argv {
  return followOptions(y)
    .positional('name', { type: 'string', demandOption: true, describe: 'the incarnation' })
    .positional('operation', { type: 'string', demandOption: true, describe: 'runs scenario/<operation>/main.yml' })
    .option('plan', {
      type: 'boolean',
      default: false,
      describe: 'show the plan first, ask, then apply exactly that plan',
    })
    .option('yes', { type: 'boolean', default: false, describe: 'do not ask' })
    .option('replace-input', replaceInputOption)
    .example(
      '$0 run motd-demo update --input listen_port=8080',
      'change one input; the others stay as the last run had them',
    )
    .option('max-failed', {
      type: 'string',
      describe: 'failure budget of this run: hosts ("2") or a percentage ("5%"), at most the scenario\'s max_failed',
    })
    .example(
      '$0 run motd-demo create --input message=hello',
      'apply create to every host of motd-demo, following progress',
    )
    .example(
      '$0 run motd-demo create --input-file input.yml --yes -o json',
      'from a script: no question, the report as JSON',
    );
}

/** Says which input keys the keeper kept from the last input (the run report holds the merged input). */
async function noteKept(ctx: Ctx, name: string, applyId: string, given: Record<string, unknown> | undefined) {
  if (given === undefined) return;
  const report = (await ctx.client().call('getRun', { params: { name, apply_id: applyId } })).body as {
    input?: Record<string, unknown>;
  };
  const kept = keptLine(given, report.input);
  if (kept) ctx.note(kept);
}

export const runHandler = (run: Handler) =>
  run(async (ctx, a) => {
    const input = parseInput(a.input, a['input-file']);
    const maxFailed = a['max-failed'] as string | undefined;
    if (a.plan && maxFailed !== undefined)
      throw new CliError(
        ExitCode.Usage,
        '--max-failed: a run that applies a plan keeps no failure budget; leave out --plan or --max-failed',
      );
    if (a.plan) {
      const plan = await makePlan(ctx, a.name, a.operation, input, a['replace-input']);
      ctx.note(planText(plan));
      if (plan.status !== 'ready')
        throw new CliError(
          ExitCode.Failed,
          `plan ${plan.plan_id} cannot be applied${plan.error ? `: ${plan.error}` : ''}`,
        );
      if (Number(plan.summary?.would_change ?? 0) === 0) {
        ctx.show(plan, () => `nothing would change on any host of ${a.name}; nothing was applied\n`);
        return;
      }
      await confirm(ctx, a.yes, `apply exactly this plan to ${a.name}?`);
      const accepted = (
        await ctx.client().call('startRun', { params: { name: a.name }, body: { plan_id: plan.plan_id } })
      ).body;
      await afterAccepted(ctx, a.name, accepted, a.follow);
      return;
    }
    await confirm(ctx, a.yes, `run ${a.operation} on every host of ${a.name}?`);
    const accepted = (
      await ctx.client().call('startRun', {
        params: { name: a.name },
        body: {
          operation: a.operation,
          ...(input ? { input } : {}),
          ...inputModeBody(a['replace-input']),
          ...(maxFailed !== undefined
            ? { max_failed: /^[0-9]+$/.test(maxFailed) ? Number(maxFailed) : maxFailed }
            : {}),
        },
      })
    ).body;
    await noteKept(ctx, a.name, (accepted as { apply_id: string }).apply_id, input);
    await afterAccepted(ctx, a.name, accepted, a.follow);
  });

export function incarnationsCommand(y: Argv, run: Handler): Argv {
  const base = y
    .command(
      'list',
      'list incarnations with their status',
      (c) =>
        c
          .option('status', { type: 'string', describe: 'applying, ready or error_locked' })
          .option('service', { type: 'string', describe: 'only incarnations of this service' })
          .option('all', { type: 'boolean', default: false, describe: 'follow the cursors to the last page' })
          .option('limit', { type: 'number', describe: 'page size' })
          .example('$0 incarnations list --status error_locked', 'what needs an operator'),
      run(async (ctx, a) => {
        const page = await listAll(
          ctx,
          'listIncarnations',
          { status: a.status, service: a.service, limit: a.limit },
          a.all,
        );
        ctx.show(page, () => incarnationTable(page.items));
      }),
    )
    .command(
      'create <name>',
      'create an incarnation of a service on covens, and follow its create run',
      // --version names the service version here, as in upgrade: keeperctl's own --version is off for this command.
      (c) =>
        followOptions(c)
          .version(false)
          .positional('name', { type: 'string', demandOption: true })
          .option('service', { type: 'string', demandOption: true, describe: 'a catalog service' })
          .option('version', { type: 'string', describe: 'a published version of the service (default: its newest)' })
          .option('coven', {
            type: 'string',
            array: true,
            demandOption: true,
            describe: 'coven label (repeat for several)',
          })
          .options(hostInputOptions)
          .example(
            '$0 incarnations create motd-web --service motd --coven web --input message=hi',
            'motd on every web host',
          )
          .example(
            '$0 incarnations create pg --service postgres --coven db --host-input-file hosts.yml',
            'with per-host input (hosts: and covens: keys)',
          ),
      run(async (ctx, a) => {
        const input = parseInput(a.input, a['input-file']);
        const hostInput = parseHostInput(a['host-input'], a['host-input-file']);
        const accepted = (
          await ctx.client().call('createIncarnation', {
            body: {
              name: a.name,
              service: a.service,
              covens: a.coven,
              ...(a.version !== undefined ? { version: a.version } : {}),
              ...(input ? { input } : {}),
              ...(hostInput ? { host_input: hostInput } : {}),
            },
          })
        ).body;
        await afterAccepted(ctx, a.name, accepted, a.follow);
      }),
    )
    .command(
      'host-input <name>',
      "replace an incarnation's per-host input (checked; the next run or plan renders with it)",
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true })
          .options(hostInputOptions)
          .option('clear', { type: 'boolean', default: false, describe: 'remove all per-host input' })
          .example('$0 incarnations host-input pg --host-input db-2.example.com=db-2.yml', 'one host differs')
          .example('$0 incarnations host-input pg --host-input-file hosts.yml', 'hosts: and covens: from a file'),
      run(async (ctx, a) => {
        const hostInput = parseHostInput(a['host-input'], a['host-input-file']);
        if (!hostInput && !a.clear)
          throw new CliError(
            ExitCode.Usage,
            'give --host-input-file, --host-input <sid>=<file>, or --clear',
            'the given per-host input replaces the whole of it',
          );
        const i = (
          await ctx.client().call('setIncarnationHostInput', {
            params: { name: a.name },
            body: a.clear ? {} : hostInput,
          })
        ).body as any;
        ctx.show(i, () => incarnationDetails(i));
      }),
    )
    .command(
      'get <name>',
      'show one incarnation: status, version, drift checks, state, last run',
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true })
          .example('$0 incarnations get motd-demo -o yaml', 'everything, as YAML'),
      run(async (ctx, a) => {
        const i = (await ctx.client().call('getIncarnation', { params: { name: a.name } })).body as any;
        ctx.show(i, () => incarnationDetails(i));
      }),
    )
    .command(
      'history <name>',
      'committed state changes, oldest first',
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true })
          .option('all', { type: 'boolean', default: false, describe: 'follow the cursors to the last page' })
          .example('$0 incarnations history motd-demo', 'each commit with its run'),
      run(async (ctx, a) => {
        const page = await listAll(ctx, 'getIncarnationHistory', {}, a.all, { name: a.name });
        ctx.show(page, () =>
          table(page.items, [
            { header: 'ID', value: (h: any) => h.id },
            { header: 'OPERATION', value: (h: any) => h.operation },
            { header: 'APPLY ID', value: (h: any) => h.apply_id },
            { header: 'SCHEMA', value: (h: any) => h.state_schema_version },
            { header: 'COMMITTED', value: (h: any) => h.created_at },
          ]),
        );
      }),
    )
    .command(
      'run-report <name> <apply_id>',
      'the report of one run (follows it while it runs)',
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true })
          .positional('apply_id', { type: 'string', demandOption: true })
          .option('follow', { type: 'boolean', default: true, describe: 'wait for a running run to end' })
          .example('$0 incarnations run-report motd-demo motd-demo.create.1a2b', 'per host and step'),
      run(async (ctx, a) => {
        const tty = Boolean(process.stderr.isTTY) && ctx.format === 'table';
        const report = a.follow
          ? await followRun(ctx, a.name, a.apply_id, { tty, quiet: ctx.format !== 'table' })
          : ((await ctx.client().call('getRun', { params: { name: a.name, apply_id: a.apply_id } })).body as RunReport);
        if (report.status === 'running') {
          ctx.show(report, () => `run ${report.apply_id} is still ${report.phase}\n`);
          return;
        }
        finish(ctx, report);
      }),
    )
    .command(
      'unlock <name>',
      'clear error_locked; --retry runs the failed operation again',
      (c) =>
        followOptions(c)
          .positional('name', { type: 'string', demandOption: true })
          .option('retry', { type: 'boolean', default: false, describe: 'run the failed operation again at once' })
          .option('replace-input', replaceInputOption)
          .option('force-render', {
            type: 'boolean',
            default: false,
            describe: 'with --retry after a plan found drift: apply a fresh render nobody reviewed',
          })
          .example('$0 incarnations unlock motd-demo --retry', 'after fixing the cause of a failed run'),
      run(async (ctx, a) => {
        const input = parseInput(a.input, a['input-file']);
        const r = await ctx.client().call('unlockIncarnation', {
          params: { name: a.name },
          body: {
            retry: a.retry,
            ...(input ? { input } : {}),
            ...inputModeBody(a['replace-input']),
            ...(a['force-render'] ? { force_render: true } : {}),
          },
        });
        const body = r.body as any;
        if (r.status === 202 && body?.apply_id) {
          await noteKept(ctx, a.name, body.apply_id, input);
          await afterAccepted(ctx, a.name, body, a.follow);
          return;
        }
        ctx.show(body, () => `unlocked ${a.name}\n`);
      }),
    )
    .command(
      'upgrade <name>',
      'move an incarnation to a published version of its service (or migrate its state at its own version)',
      // --version here names the service version: yargs' own --version (keeperctl's) is switched off for this command.
      (c) =>
        c
          .version(false)
          .positional('name', { type: 'string', demandOption: true })
          .option('version', {
            type: 'string',
            describe: 'a published version of the service (keeperctl services versions <service>)',
          })
          .option('to-version', {
            type: 'number',
            describe: "without --version: target state_schema_version at the incarnation's own version",
          })
          .option('follow', { type: 'boolean', default: true, describe: 'follow the upgrade run' })
          .example(
            '$0 incarnations upgrade motd-demo --version v2',
            "run the migrations up to v2's schema; runs apply v2 from then on",
          ),
      run(async (ctx, a) => {
        const body =
          a.version !== undefined
            ? { version: a.version }
            : a['to-version'] !== undefined
              ? { to_version: a['to-version'] }
              : {};
        const accepted = (await ctx.client().call('upgradeIncarnation', { params: { name: a.name }, body })).body;
        await afterAccepted(ctx, a.name, accepted, a.follow);
      }),
    );
  // Commands kept in files of their own (one concept each) join the same `incarnations` group.
  return [runsCommand, planCommands, driftCommand, deleteCommand, approveCommand, cancelCommand]
    .reduce((acc, add) => add(acc, run), base)
    .demandCommand(
      1,
      'name an incarnations command: list, create, get, history, runs, run-report, plan, plans, plan-report, apply-plan, unlock, approve, cancel, upgrade, drift or delete',
    );
}
