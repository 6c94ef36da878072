// keeperctl incarnations approve NAME APPLY_ID: lets a run waiting for approval at its scenario's
// `gate:` go on with its next batch (docs/runs.md "Gates between batches"). A run not waiting for
// approval is refused (409) and the command exits 5 (a conflict) with the keeper's reason.
import type { Argv } from 'yargs';
import type { Handler } from './types';

export function approveCommand(y: Argv, run: Handler): Argv {
  return y.command(
    'approve <name> <apply_id>',
    'approve a run waiting at a gate between batches; its next batch starts',
    (c) =>
      c
        .positional('name', { type: 'string', demandOption: true })
        .positional('apply_id', { type: 'string', demandOption: true })
        .example('$0 incarnations approve web a-20261126-1234', 'after checking the first batch'),
    run(async (ctx, a) => {
      const r = await ctx.client().call('approveRun', { params: { name: a.name, apply_id: a.apply_id } });
      const body = r.body as { apply_id: string; batch: number; waited_ms: number };
      ctx.show(
        body,
        () =>
          `approved ${body.apply_id} after batch ${body.batch} (it waited ${Math.round(body.waited_ms / 1000)}s); batch ${body.batch + 1} starts\n`,
      );
    }),
  );
}
