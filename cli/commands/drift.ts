// keeperctl incarnations drift NAME --interval 10m [--auto-repair] | --off (docs/drift.md): the
// schedule of an incarnation's drift checks. The outcome of the checks is part of the incarnation
// (`incarnations get`), so this command only sets, and prints the setting back as the keeper stored it.
import type { Argv } from 'yargs';
import { CliError, ExitCode } from '../errors';
import { driftText } from '../incarnation-view';
import type { Handler } from './types';

export function driftCommand(y: Argv, run: Handler): Argv {
  return y.command(
    'drift <name>',
    'check an incarnation for drift on a schedule (--interval), optionally repairing it, or stop (--off)',
    (c) =>
      c
        .positional('name', { type: 'string', demandOption: true, describe: 'the incarnation' })
        .option('interval', { type: 'string', describe: 'how often: a number and one unit s, m, h or d (2s..30d)' })
        .option('auto-repair', { type: 'boolean', default: false, describe: "apply a drifted check's plan at once" })
        .option('off', { type: 'boolean', default: false, describe: 'stop checking' })
        .example(
          '$0 incarnations drift motd-demo --interval 10m',
          'check every 10 minutes; see the outcome in incarnations get',
        )
        .example('$0 incarnations drift motd-demo --off', 'stop checking'),
    run(async (ctx, a) => {
      // Exactly one of the two: an omitted interval must never turn checks off by accident.
      if ((a.interval === undefined) === !a.off) {
        throw new CliError(
          ExitCode.Usage,
          'give either --interval <duration> or --off',
          'for example: keeperctl incarnations drift NAME --interval 10m',
        );
      }
      if (a.off && a['auto-repair'])
        throw new CliError(ExitCode.Usage, '--auto-repair goes with --interval, not with --off', 'drop --auto-repair');
      const body = a.off ? { interval: null } : { interval: a.interval, auto_repair: a['auto-repair'] };
      const inc = (await ctx.client().call('setDriftCheck', { params: { name: a.name }, body })).body as any;
      ctx.show(
        inc,
        () =>
          `${inc.name}: ${inc.drift.interval === null ? 'drift checks off' : `drift checked ${driftText(inc.drift)}`}\n`,
      );
    }),
  );
}
