// keeperctl incarnations runs NAME: an incarnation's runs, newest first (plans are listed apart, by
// `incarnations plans`). Each row says how the run ended and on how many hosts; the report of one
// is `incarnations run-report NAME APPLY_ID`.
import type { Argv } from 'yargs';
import { listAll } from '../context';
import { table } from '../output';
import type { Handler } from './types';

/** "3 hosts: changed 2, ok 1" from a run's summary; null while it runs (no counts yet). */
function hostsCell(summary: any): string | null {
  const h = summary?.hosts;
  if (!h || typeof h !== 'object') return null;
  const counts = Object.entries(h as Record<string, number>).filter(([, n]) => Number(n) > 0);
  const total = counts.reduce((s, [, n]) => s + Number(n), 0);
  return `${total}: ${counts.map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`;
}

const runColumns = [
  { header: 'APPLY ID', value: (r: any) => r.apply_id },
  { header: 'OPERATION', value: (r: any) => r.operation },
  { header: 'STATUS', value: (r: any) => r.status },
  { header: 'VERSION', value: (r: any) => r.service_ref },
  { header: 'HOSTS', value: (r: any) => hostsCell(r.summary) },
  { header: 'STARTED', value: (r: any) => r.created_at },
  { header: 'FINISHED', value: (r: any) => r.finished_at },
];

export function runsCommand(y: Argv, run: Handler): Argv {
  return y.command(
    'runs <name>',
    "list an incarnation's runs, newest first",
    (c) =>
      c
        .positional('name', { type: 'string', demandOption: true, describe: 'the incarnation' })
        .option('all', { type: 'boolean', default: false, describe: 'follow the cursors to the oldest run' })
        .option('limit', { type: 'number', describe: 'page size' })
        .example(
          '$0 incarnations runs motd-demo --all',
          'every run of motd-demo; read one with incarnations run-report',
        ),
    run(async (ctx, a) => {
      const page = await listAll(ctx, 'listRuns', { limit: a.limit }, a.all, { name: a.name });
      ctx.show(page, () => table(page.items, runColumns) + (page.next_cursor ? '(more: --all)\n' : ''));
    }),
  );
}
