// keeperctl services add|list|get|versions
import type { Argv } from 'yargs';
import { listAll } from '../context';
import { details, table } from '../output';
import type { Handler } from './types';

const columns = [
  { header: 'NAME', value: (s: any) => s.name },
  { header: 'VERSION', value: (s: any) => s.version },
  { header: 'GIT', value: (s: any) => s.git },
  { header: 'UPDATED', value: (s: any) => s.updated_at },
];

export function servicesCommand(y: Argv, run: Handler): Argv {
  return y
    .command('add <name>', 'register a service (a git repository at a ref) in the catalog',
      (c) => c.positional('name', { type: 'string', demandOption: true, describe: 'catalog name' })
        .option('git', { type: 'string', demandOption: true, describe: 'repository URL' })
        .option('ref', { type: 'string', demandOption: true, describe: 'branch or tag: the service version' })
        .example('$0 services add motd --git https://git.example.org/ops/motd.git --ref v1', 'register motd at tag v1'),
      run(async (ctx, a) => {
        const s = (await ctx.client().call('createService', { body: { name: a.name, git: a.git, ref: a.ref } })).body as any;
        ctx.show(s, () => `registered service ${s.name} at ${s.ref}\n`);
      }))
    .command('list', 'list the catalog',
      (c) => c.option('all', { type: 'boolean', default: false, describe: 'follow the cursors to the last page' })
        .option('limit', { type: 'number', describe: 'page size' })
        .example('$0 services list -o json', 'the catalog as JSON'),
      run(async (ctx, a) => {
        const page = await listAll(ctx, 'listServices', { limit: a.limit }, a.all);
        ctx.show(page, () => table(page.items, columns));
      }))
    .command('get <name>', 'show one service',
      (c) => c.positional('name', { type: 'string', demandOption: true }).example('$0 services get motd', 'git URL and version of motd'),
      run(async (ctx, a) => {
        const s = (await ctx.client().call('getService', { params: { name: a.name } })).body as any;
        ctx.show(s, () => details(s));
      }))
    .command('versions <name>', 'list the published versions of a service',
      (c) => c.positional('name', { type: 'string', demandOption: true }).example('$0 services versions motd', 'versions an incarnation can upgrade to'),
      run(async (ctx, a) => {
        const page = await listAll(ctx, 'listServiceVersions', {}, true, { name: a.name });
        ctx.show(page, () => table(page.items, [
          { header: 'VERSION', value: (v: any) => v.version ?? v.ref },
          { header: 'COMMIT', value: (v: any) => v.commit },
          { header: 'SCHEMA', value: (v: any) => String(v.state_schema_version) },
          { header: 'PUBLISHED', value: (v: any) => v.published_at },
        ]));
      }))
    .demandCommand(1, 'name a services command: add, list, get or versions');
}
