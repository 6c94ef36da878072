// keeperctl activity: who changed what, when, from where (GET /v1/activity, docs/api.md "Activity").
import type { Argv } from 'yargs';
import { listAll } from '../context';
import { table } from '../output';
import type { Handler } from './types';

export function activityOptions(y: Argv): Argv {
  return y
    .option('actor', {
      type: 'string',
      describe: 'only this actor: an AID, keeper:<kid> (converger) or keeper:drift-check',
    })
    .option('target', { type: 'string', describe: 'only this path and what lies under it, e.g. /v1/incarnations/web' })
    .option('outcome', {
      type: 'string',
      choices: ['ok', 'refused', 'failed'],
      describe: 'only calls that succeeded (status below 400), were refused (4xx) or failed (5xx)',
    })
    .option('since', { type: 'string', describe: 'only at or after this RFC 3339 time' })
    .option('until', { type: 'string', describe: 'only before this RFC 3339 time' })
    .option('limit', { type: 'number', describe: 'rows per page (the API allows up to 1000)' })
    .option('all', { type: 'boolean', default: false, describe: 'follow the cursors to the oldest row' })
    .example('$0 activity --actor alice', 'what alice did, newest first')
    .example(
      '$0 activity --target /v1/incarnations/web --since 2026-11-27T00:00:00Z',
      'every change to web today, by operators and the keeper',
    );
}

export function activityHandler(run: Handler) {
  return run(async (ctx, a) => {
    const query: Record<string, unknown> = {};
    for (const k of ['actor', 'target', 'outcome', 'since', 'until', 'limit'] as const)
      if (a[k] !== undefined) query[k] = a[k];
    const page = await listAll(ctx, 'listActivity', query, a.all);
    ctx.show(
      page,
      () =>
        table(page.items, [
          { header: 'AT', value: (x: any) => x.at },
          { header: 'ACTOR', value: (x: any) => x.actor },
          { header: 'VIA', value: (x: any) => x.via },
          { header: 'ACTION', value: (x: any) => x.action },
          { header: 'TARGET', value: (x: any) => x.target },
          { header: 'STATUS', value: (x: any) => String(x.status) },
          { header: 'APPLY ID', value: (x: any) => x.apply_id ?? '' },
          { header: 'FROM', value: (x: any) => x.source ?? '' },
        ]) + (page.next_cursor ? 'more rows: --all, or narrow with --since/--actor/--target\n' : ''),
    );
  });
}
