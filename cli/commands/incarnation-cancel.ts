// keeperctl incarnations cancel NAME APPLY_ID: stops a run waiting at its scenario's `gate:` (for its
// health check or for approval): no further batch starts, nothing is committed, the incarnation ends
// `error_locked` naming the operator (docs/runs.md "Cancelling a waiting run"). A run not waiting is
// refused (409) and the command exits 5 (a conflict) with the keeper's reason.
import type { Argv } from 'yargs';
import type { Handler } from './types';

export function cancelCommand(y: Argv, run: Handler): Argv {
  return y.command(
    'cancel <name> <apply_id>',
    'cancel a run waiting at a gate between batches; no further batch starts, nothing is committed',
    (c) =>
      c
        .positional('name', { type: 'string', demandOption: true })
        .positional('apply_id', { type: 'string', demandOption: true })
        .example('$0 incarnations cancel web a-20261126-1234', 'the first batch went wrong: stop here'),
    run(async (ctx, a) => {
      const r = await ctx.client().call('cancelRun', { params: { name: a.name, apply_id: a.apply_id } });
      const body = r.body as { apply_id: string; incarnation: string; batch: number; waited_for: string };
      ctx.show(
        body,
        () =>
          `cancelled ${body.apply_id} while it waited for ${body.waited_for} after batch ${body.batch}; ` +
          `no further batch starts and nothing is committed: ${body.incarnation} ends error_locked ` +
          `(keeperctl incarnations unlock ${body.incarnation} once you have looked)\n`,
      );
    }),
  );
}
