// keeperctl incarnations delete NAME [--force] [--yes]: the end of an incarnation's life. Without
// --force the keeper runs the service's `destroy` operation on the hosts (followed like any run);
// its commit removes the record. --force removes the record at once and touches no host. Either way
// it asks first, like `run`: both are hard to take back.
import type { Argv } from 'yargs';
import { confirm } from '../prompt';
import { afterAccepted } from './accepted';
import type { Handler } from './types';

export function deleteCommand(y: Argv, run: Handler): Argv {
  return y.command(
    'delete <name>',
    "delete an incarnation: run its service's destroy operation (or --force: only remove the record)",
    (c) =>
      c
        .positional('name', { type: 'string', demandOption: true, describe: 'the incarnation' })
        .option('force', {
          type: 'boolean',
          default: false,
          describe: 'remove the record now without running anything; the hosts keep what was applied',
        })
        .option('yes', { type: 'boolean', default: false, describe: 'do not ask' })
        .option('follow', {
          type: 'boolean',
          default: true,
          describe: 'follow the destroy run until it ends (--no-follow returns at once)',
        })
        .example('$0 incarnations delete motd-demo', 'runs destroy on every host of motd-demo, then the name is free')
        .example(
          '$0 incarnations delete motd-demo --force --yes',
          'a service without destroy: forget the incarnation, leave the hosts as they are',
        ),
    run(async (ctx, a) => {
      await confirm(
        ctx,
        a.yes,
        a.force
          ? `remove ${a.name} without running anything? Its hosts keep what was applied.`
          : `run destroy on every host of ${a.name} and then remove it?`,
      );
      const r = await ctx.client().call('deleteIncarnation', { params: { name: a.name }, query: { force: a.force } });
      const body = r.body as any;
      if (r.status === 202) {
        await afterAccepted(
          ctx,
          a.name,
          body,
          a.follow,
          (report) =>
            `run ${report.apply_id} succeeded: ${report.incarnation} is destroyed and removed; its history stays readable (keeperctl incarnations history ${report.incarnation})\n`,
        );
        return;
      }
      ctx.show(
        body,
        () =>
          `removed ${body.name} without running anything; its history stays readable (keeperctl incarnations history ${body.name})\n`,
      );
    }),
  );
}
