// keeperctl archons list|get|create|role|delete|token|revoke-tokens (operators)
import type { Argv } from 'yargs';
import { listAll } from '../context';
import { details, table } from '../output';
import { confirm } from '../prompt';
import type { Handler } from './types';

export function archonsCommand(y: Argv, run: Handler): Argv {
  return y
    .command(
      'list',
      'list operators and their roles',
      (c) =>
        c
          .option('all', { type: 'boolean', default: false, describe: 'follow the cursors to the last page' })
          .example('$0 archons list', 'who may do what'),
      run(async (ctx, a) => {
        const page = await listAll(ctx, 'listArchons', {}, a.all);
        ctx.show(page, () =>
          table(page.items, [
            { header: 'AID', value: (x: any) => x.aid },
            { header: 'ROLE', value: (x: any) => x.role },
            { header: 'CREATED BY', value: (x: any) => x.created_by },
            { header: 'CREATED', value: (x: any) => x.created_at },
          ]),
        );
      }),
    )
    .command(
      'get <aid>',
      'show one operator with its permissions',
      (c) =>
        c
          .positional('aid', { type: 'string', demandOption: true })
          .example('$0 archons get alice', "alice's role and permissions"),
      run(async (ctx, a) => {
        const x = (await ctx.client().call('getArchon', { params: { aid: a.aid } })).body as any;
        ctx.show(x, () => details(x));
      }),
    )
    .command(
      'create <aid>',
      'create an operator with a role',
      (c) =>
        c
          .positional('aid', { type: 'string', demandOption: true })
          .option('role', { type: 'string', demandOption: true, describe: 'cluster-admin, operator or viewer' })
          .example('$0 archons create alice --role operator', 'then: keeperctl archons token alice'),
      run(async (ctx, a) => {
        const x = (await ctx.client().call('createArchon', { body: { aid: a.aid, role: a.role } })).body as any;
        ctx.show(
          x,
          () => `created operator ${x.aid} (role ${x.role}); issue a token with: keeperctl archons token ${x.aid}\n`,
        );
      }),
    )
    .command(
      'role <aid>',
      "change an operator's role (from its next request on, whatever its tokens say)",
      (c) =>
        c
          .positional('aid', { type: 'string', demandOption: true })
          .option('role', { type: 'string', demandOption: true, describe: 'cluster-admin, operator or viewer' })
          .example('$0 archons role alice --role viewer', 'alice may only read from now on'),
      run(async (ctx, a) => {
        const x = (await ctx.client().call('updateArchon', { params: { aid: a.aid }, body: { role: a.role } }))
          .body as any;
        ctx.show(x, () => `operator ${x.aid} now has the role ${x.role}\n`);
      }),
    )
    .command(
      'delete <aid>',
      'remove an operator: its tokens are refused from its next request on (never the last cluster-admin)',
      (c) =>
        c
          .positional('aid', { type: 'string', demandOption: true })
          .option('yes', { type: 'boolean', default: false, describe: 'do not ask' })
          .example('$0 archons delete alice --yes', 'alice has left the team'),
      run(async (ctx, a) => {
        await confirm(ctx, a.yes, `remove operator ${a.aid}? Its tokens stop working at once.`);
        await ctx.client().call('deleteArchon', { params: { aid: a.aid } });
        // 204: no body; scripts get the same fact as JSON.
        ctx.show({ aid: a.aid, deleted: true }, () => `removed operator ${a.aid}\n`);
      }),
    )
    .command(
      'token <aid>',
      'issue a token for an operator (shown once)',
      (c) =>
        c
          .positional('aid', { type: 'string', demandOption: true })
          .example(
            '$0 archons token alice -o json | jq -r .token > alice.jwt',
            'hand the file to alice for keeperctl login',
          ),
      run(async (ctx, a) => {
        const t = (await ctx.client().call('issueArchonToken', { params: { aid: a.aid } })).body as any;
        ctx.show(
          t,
          () =>
            `token for ${t.aid} (role ${t.role}, valid until ${t.expires_at ?? 'no expiry'}), shown once:\n${t.token}\n`,
        );
      }),
    )
    .command(
      'revoke-tokens <aid>',
      'revoke every token of an operator issued before now, or one token by its id (every keeper refuses them at once)',
      (c) =>
        c
          .positional('aid', { type: 'string', demandOption: true })
          .option('jti', {
            type: 'string',
            describe: 'revoke only this token: its id (the jti of a call made with it in keeperctl activity -o json)',
          })
          .example('$0 archons revoke-tokens alice', "alice's tokens stop working; then: keeperctl archons token alice")
          .example(
            '$0 archons revoke-tokens alice --jti 0b6f9c1e-5d2a-4c39-9a57-3e8f1d2c4b6a',
            "only that token of alice's stops working (e.g. one that leaked); her others keep working",
          ),
      run(async (ctx, a) => {
        const one = a.jti !== undefined;
        const x = (
          await ctx.client().call('revokeArchonTokens', {
            params: { aid: a.aid },
            ...(one ? { body: { jti: a.jti } } : {}),
          })
        ).body as any;
        ctx.show(x, () =>
          one
            ? `revoked token ${a.jti} of ${x.aid}; its other tokens keep working\n`
            : `revoked the tokens of ${x.aid} issued before ${x.tokens_valid_after}; issue a new one with: keeperctl archons token ${x.aid}\n`,
        );
      }),
    )
    .demandCommand(1, 'name an archons command: list, get, create, role, delete, token or revoke-tokens');
}
