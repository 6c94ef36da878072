// keeperctl services add|list|get|delete|publish|versions|version|yank (docs/versions.md)
import type { Argv } from 'yargs';
import { listAll } from '../context';
import { details, table } from '../output';
import { confirm } from '../prompt';
import type { Handler } from './types';

const columns = [
  { header: 'NAME', value: (s: any) => s.name },
  { header: 'VERSION', value: (s: any) => s.version },
  { header: 'GIT', value: (s: any) => s.git },
  { header: 'UPDATED', value: (s: any) => s.updated_at },
];

export function servicesCommand(y: Argv, run: Handler): Argv {
  return y
    .command(
      'add <name>',
      'register a service (a git repository at a ref) in the catalog',
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true, describe: 'catalog name' })
          .option('git', { type: 'string', demandOption: true, describe: 'repository URL' })
          .option('ref', { type: 'string', demandOption: true, describe: 'branch or tag: the service version' })
          .example(
            '$0 services add motd --git https://git.example.org/ops/motd.git --ref v1',
            'register motd at tag v1',
          ),
      run(async (ctx, a) => {
        const s = (await ctx.client().call('createService', { body: { name: a.name, git: a.git, ref: a.ref } }))
          .body as any;
        ctx.show(s, () => `registered service ${s.name} at ${s.ref}\n`);
      }),
    )
    .command(
      'list',
      'list the catalog',
      (c) =>
        c
          .option('all', { type: 'boolean', default: false, describe: 'follow the cursors to the last page' })
          .option('limit', { type: 'number', describe: 'page size' })
          .example('$0 services list -o json', 'the catalog as JSON'),
      run(async (ctx, a) => {
        const page = await listAll(ctx, 'listServices', { limit: a.limit }, a.all);
        ctx.show(page, () => table(page.items, columns));
      }),
    )
    .command(
      'get <name>',
      'show one service',
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true })
          .example('$0 services get motd', 'git URL and version of motd'),
      run(async (ctx, a) => {
        const s = (await ctx.client().call('getService', { params: { name: a.name } })).body as any;
        ctx.show(s, () => details(s));
      }),
    )
    .command(
      'delete <name>',
      'remove a service and its versions from the catalog (refused while an incarnation uses it)',
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true })
          .option('yes', { type: 'boolean', default: false, describe: 'do not ask' })
          .example('$0 services delete motd-test --yes', 'a throwaway service'),
      run(async (ctx, a) => {
        await confirm(ctx, a.yes, `remove service ${a.name} and its published versions from the catalog?`);
        await ctx.client().call('deleteService', { params: { name: a.name } });
        ctx.show({ name: a.name, deleted: true }, () => `removed service ${a.name}\n`);
      }),
    )
    .command(
      'versions <name>',
      'list the published versions of a service',
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true })
          .example('$0 services versions motd', 'versions an incarnation can upgrade to'),
      run(async (ctx, a) => {
        // The keeper answers every version in one page (next_cursor null); --all-style following keeps that true if it ever pages.
        const page = await listAll(ctx, 'listServiceVersions', {}, true, { name: a.name });
        ctx.show(page, () =>
          table(page.items, [
            {
              header: 'VERSION',
              value: (v: any) => (v.yanked ? `${v.version} (yanked: ${v.yanked.reason})` : (v.version ?? v.ref)),
            },
            { header: 'COMMIT', value: (v: any) => v.commit },
            { header: 'SCHEMA', value: (v: any) => String(v.state_schema_version) },
            { header: 'PUBLISHED BY', value: (v: any) => v.published_by },
            { header: 'PUBLISHED', value: (v: any) => v.published_at },
          ]),
        );
      }),
    )
    .command(
      'publish <name> <ref>',
      'publish a ref (tag or branch) as a version: resolved and pinned to its commit now, after a lint',
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true, describe: 'catalog name' })
          .positional('ref', {
            type: 'string',
            demandOption: true,
            describe: 'the tag or branch to publish; its name is the version',
          })
          .example('$0 services publish motd v2', 'then: keeperctl incarnations upgrade <name> --version v2'),
      run(async (ctx, a) => {
        const v = (await ctx.client().call('publishServiceVersion', { params: { name: a.name }, body: { ref: a.ref } }))
          .body as any;
        ctx.show(
          v,
          () =>
            `published ${v.service} ${v.version} at commit ${v.commit} (state_schema_version ${v.state_schema_version})\n` +
            `upgrade an incarnation to it with: keeperctl incarnations upgrade <name> --version ${v.version}\n`,
        );
      }),
    )
    .command(
      'version <name> <ref>',
      'show a published version: its commit, and its operations with their inputs',
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true, describe: 'catalog name' })
          .positional('ref', {
            type: 'string',
            demandOption: true,
            describe: 'a published version: the ref it was published as (keeperctl services versions <name>)',
          })
          .example('$0 services version motd v1', 'what motd v1 can run, and the inputs each operation takes'),
      run(async (ctx, a) => {
        const v = (await ctx.client().call('getServiceVersion', { params: { name: a.name, version: a.ref } }))
          .body as any;
        ctx.show(
          v,
          () =>
            details({ ...v, yanked: yankText(v.yanked) }, [
              'service',
              'version',
              'yanked',
              'commit',
              'state_schema_version',
              'published_by',
              'published_at',
            ]) +
            '\n' +
            operationsTable(v.operations),
        );
      }),
    )
    .command(
      'yank <name> <ref>',
      'withdraw a published version: never offered as newer, refused for new incarnations and upgrades; incarnations on it keep running',
      (c) =>
        c
          .positional('name', { type: 'string', demandOption: true, describe: 'catalog name' })
          .positional('ref', { type: 'string', demandOption: true, describe: 'the published version to withdraw' })
          .option('reason', {
            type: 'string',
            demandOption: true,
            describe: 'why: shown to everyone who meets the version',
          })
          .example('$0 services yank motd v5 --reason "breaks the login banner"', 'nobody is offered v5 any more'),
      run(async (ctx, a) => {
        const v = (
          await ctx
            .client()
            .call('yankServiceVersion', { params: { name: a.name, version: a.ref }, body: { reason: a.reason } })
        ).body as any;
        ctx.show(
          v,
          () =>
            `yanked ${v.service} ${v.version}: ${v.yanked.reason}\n` +
            `incarnations on it keep running; find them with: keeperctl incarnations list --service ${v.service}\n`,
        );
      }),
    )
    .demandCommand(1, 'name a services command: add, list, get, delete, publish, versions, version or yank');
}

/** A version's yank in one line, or null. */
export function yankText(
  y: { reason: string; yanked_by: string | null; yanked_at: string } | null | undefined,
): string | null {
  return y ? `${y.reason} (by ${y.yanked_by ?? 'unknown'} at ${y.yanked_at})` : null;
}

/** One line per input of each operation (an operation without inputs gets one line of its own). */
interface InputInfo {
  name: string;
  type: string;
  required: boolean;
  default?: unknown;
  secret: boolean;
}
interface OperationRow {
  op: string;
  input: InputInfo | null;
}

function operationsTable(operations: { name: string; inputs: InputInfo[] }[]): string {
  const rows = operations.flatMap((o): OperationRow[] =>
    o.inputs.length === 0 ? [{ op: o.name, input: null }] : o.inputs.map((i) => ({ op: o.name, input: i })),
  );
  return table<OperationRow>(rows, [
    { header: 'OPERATION', value: (r) => r.op },
    { header: 'INPUT', value: (r) => r.input?.name ?? null },
    { header: 'TYPE', value: (r) => r.input?.type ?? null },
    { header: 'REQUIRED', value: (r) => (r.input ? (r.input.required ? 'yes' : 'no') : null) },
    { header: 'DEFAULT', value: (r) => (r.input && 'default' in r.input ? JSON.stringify(r.input.default) : null) },
    { header: 'SECRET', value: (r) => (r.input ? (r.input.secret ? 'yes' : 'no') : null) },
  ]);
}
