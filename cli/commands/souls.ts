// keeperctl souls list|get|add|covens|check|issue-token|revoke|delete
import fs from 'node:fs';
import type { Argv } from 'yargs';
import { Ctx, listAll } from '../context';
import { details, table } from '../output';
import { CliError, ExitCode } from '../errors';
import { confirm } from '../prompt';
import type { Handler } from './types';

const soulColumns = [
  { header: 'SID', value: (s: any) => s.sid },
  { header: 'STATUS', value: (s: any) => s.status },
  { header: 'TRANSPORT', value: (s: any) => s.transport },
  { header: 'COVENS', value: (s: any) => s.covens },
  { header: 'KEEPER', value: (s: any) => s.connected_kid },
  { header: 'LAST SEEN', value: (s: any) => s.last_seen_at },
];

export function soulsCommand(y: Argv, run: Handler): Argv {
  return y
    .command(
      'list',
      'list souls (hosts) with their status',
      (c) =>
        c
          .option('coven', { type: 'string', describe: 'only souls carrying this coven' })
          .option('status', {
            type: 'string',
            describe: 'only souls in this status (pending, connected, disconnected, ...)',
          })
          .option('limit', { type: 'number', describe: 'page size (the API allows up to 1000)' })
          .option('all', { type: 'boolean', default: false, describe: 'follow the cursors to the last page' })
          .option('where', {
            type: 'string',
            describe: 'CEL over soulprint.self: only souls it is true for (from the stored facts; no host contacted)',
          })
          .option('fields', {
            type: 'string',
            describe: 'comma-separated facts to show instead of the registry columns (os_release,architecture)',
          })
          .option('count-by', { type: 'string', describe: 'a fact: also count the matching souls per value of it' })
          .option('refresh', {
            type: 'boolean',
            default: false,
            describe: 'first ask the connected souls for their facts now (waits up to 5 s), then answer',
          })
          .example('$0 souls list --coven web --status connected', 'connected souls of coven web')
          .example(
            '$0 souls list --coven web --refresh --fields os_release,architecture',
            'facts asked of the hosts now',
          )
          .example(
            '$0 souls list --where \'soulprint.self.os_release == "12"\' --fields os_release,architecture --count-by architecture',
            'a fact query',
          ),
      run(async (ctx: Ctx, a: any) => {
        const query = {
          coven: a.coven,
          status: a.status,
          limit: a.limit,
          where: a.where,
          fields: a.fields,
          count_by: a.countBy,
        };
        // --refresh asks the hosts once, before the pages are read (the pages then read the fresh facts).
        const first = a.refresh
          ? ((await ctx.client().call('listSouls', { query: { ...query, limit: 1, refresh: true } })).body as any)
          : undefined;
        const refresh = first?.refresh;
        const page = await listAll(ctx, 'listSouls', query, a.all);
        // count_by covers every match (not one page): it comes from the first answer.
        const counts = a.countBy
          ? (first ?? ((await ctx.client().call('listSouls', { query: { ...query, limit: 1 } })).body as any)).count_by
          : undefined;
        const data = { ...page, ...(counts ? { count_by: counts } : {}), ...(refresh ? { refresh } : {}) };
        ctx.show(data, () => {
          const columns = a.fields
            ? [
                { header: 'SID', value: (s: any) => s.sid },
                ...String(a.fields)
                  .split(',')
                  .map((f) => ({ header: f.toUpperCase(), value: (s: any) => s.facts?.[f] })),
                { header: 'AGE', value: (s: any) => (s.soulprint_age_s === null ? null : `${s.soulprint_age_s}s`) },
              ]
            : soulColumns;
          let out = a.countBy && !a.fields ? '' : table(page.items, columns);
          if (counts)
            out +=
              (out ? '\n' : '') +
              table(counts.values, [
                { header: String(a.countBy).toUpperCase(), value: (v: any) => v.value },
                { header: 'COUNT', value: (v: any) => v.count },
              ]) +
              `total ${counts.total}\n`;
          if (refresh)
            out +=
              `refreshed: ${refresh.answered} of ${refresh.asked} connected souls answered` +
              (refresh.unanswered.length > 0 ? ` (stored facts shown for ${refresh.unanswered.join(', ')})` : '') +
              '\n';
          return out + (page.next_cursor ? `(more: --all, or the API's cursor ${page.next_cursor})\n` : '');
        });
      }),
    )
    .command(
      'get <sid>',
      'show one soul',
      (c) =>
        c
          .positional('sid', { type: 'string', demandOption: true, describe: 'the host FQDN' })
          .example('$0 souls get web-1.example.org', 'status, covens and soulprint of web-1'),
      run(async (ctx, a) => {
        const s = (await ctx.client().call('getSoul', { params: { sid: a.sid } })).body as any;
        ctx.show(s, () =>
          details(s, [
            'sid',
            'status',
            'transport',
            'covens',
            'connected_kid',
            'last_seen_at',
            'onboarded_at',
            'cert_not_after',
            'created_at',
            'bootstrap_token_expires_at',
          ]),
        );
      }),
    )
    .command(
      'add <sid>',
      'register a host; prints its one-time bootstrap token (transport agent) or how it is reached (ssh)',
      (c) =>
        c
          .positional('sid', {
            type: 'string',
            demandOption: true,
            describe: 'the host FQDN (must equal its hostname -f)',
          })
          .option('coven', {
            type: 'string',
            array: true,
            demandOption: true,
            describe: 'coven label (repeat for several)',
          })
          .option('transport', {
            type: 'string',
            default: 'agent',
            describe: 'how the keeper reaches it: agent, or ssh (docs/ssh.md)',
          })
          .option('address', { type: 'string', describe: 'ssh: host name or IP address of sshd' })
          .option('port', { type: 'number', describe: 'ssh: sshd port (22)' })
          .option('user', { type: 'string', describe: 'ssh: login user' })
          .option('host-key', {
            type: 'string',
            describe: "ssh: the host's public key, or @<file> (e.g. @ssh_host_ed25519_key.pub)",
          })
          .option('credential-ref', {
            type: 'string',
            describe: 'ssh: secretstore:<path>#<field> holding the private key',
          })
          .option('sudo', { type: 'boolean', describe: 'ssh: run steps through sudo -n' })
          .option('trust-on-first-use', { type: 'boolean', describe: 'ssh: no --host-key; record the first key seen' })
          .example('$0 souls add web-1.example.org --coven web', 'then on the host: soul init --token=<token>')
          .example(
            '$0 souls add build-7.example.org --coven build --transport ssh --address 10.0.4.7 --user keeper --host-key @build-7.pub --credential-ref secretstore:secret/keeper/ssh/build#private_key',
            'push mode over SSH',
          ),
      run(async (ctx, a) => {
        const body: Record<string, unknown> = { sid: a.sid, transport: a.transport, covens: a.coven };
        if (a.transport === 'ssh') {
          const hostKey =
            typeof a.hostKey === 'string' && a.hostKey.startsWith('@') ? readHostKey(a.hostKey.slice(1)) : a.hostKey;
          // Only what was given is sent: the API names each missing or broken field.
          body.ssh = Object.fromEntries(
            Object.entries({
              address: a.address,
              port: a.port,
              user: a.user,
              host_key: hostKey,
              credential_ref: a.credentialRef,
              sudo: a.sudo,
              trust_on_first_use: a.trustOnFirstUse,
            }).filter(([, v]) => v !== undefined),
          );
        }
        const s = (await ctx.client().call('registerSoul', { body })).body as any;
        if (s.transport === 'ssh') {
          ctx.show(
            s,
            () =>
              `registered ${s.sid} (covens ${s.covens.join(',')}), reached over SSH as ${s.ssh.user}@${s.ssh.address}:${s.ssh.port}; no token.\n` +
              `check it before its first run: keeperctl souls check ${s.sid}\n`,
          );
          return;
        }
        ctx.show(
          s,
          () =>
            `registered ${s.sid} (covens ${s.covens.join(',')})\nbootstrap token (shown once, valid until ${s.bootstrap_token_expires_at}):\n${s.bootstrap_token}\non the host: soul init --config=/etc/soul/soul.yml --token=<token>\n`,
        );
      }),
    )
    .command(
      'check <sid>',
      'SSH hosts: connect now, verify the pinned host key and the FQDN, and show the facts',
      (c) =>
        c
          .positional('sid', { type: 'string', demandOption: true, describe: 'the host FQDN' })
          .example('$0 souls check build-7.example.org', 'is the SSH host reachable, and is it the host it should be?'),
      run(async (ctx, a) => {
        const r = (await ctx.client().call('checkSoul', { params: { sid: a.sid } })).body as any;
        if (!r.reachable) {
          if (ctx.format === 'table')
            throw new CliError(
              ExitCode.Failed,
              `${a.sid} is not reachable: ${r.reason}`,
              'see docs/ssh.md (host key pinning, what must exist on the host)',
            );
          ctx.show(r, () => '');
          process.exitCode = ExitCode.Failed;
          return;
        }
        ctx.show(
          r,
          () =>
            `${a.sid} is reachable: ${r.facts.os_name} ${r.facts.os_release} ${r.facts.architecture}, soul ${r.facts.soul_version}\n`,
        );
      }),
    )
    .command(
      'covens <sid> <covens..>',
      "replace a host's covens; incarnations of a coven it gains are brought to it",
      (c) =>
        c
          .positional('sid', { type: 'string', demandOption: true, describe: 'the host FQDN' })
          .positional('covens', {
            type: 'string',
            array: true,
            demandOption: true,
            describe: 'every coven the host carries from now on',
          })
          .example('$0 souls covens web-1.example.org web eu-west', 'web-1 now carries exactly web and eu-west'),
      run(async (ctx, a) => {
        const r = (await ctx.client().call('changeSoulCovens', { params: { sid: a.sid }, body: { covens: a.covens } }))
          .body as any;
        ctx.show(r, () => covensText(r));
      }),
    )
    .command(
      'issue-token <sid>',
      'issue a new bootstrap token for a registered host',
      (c) =>
        c
          .positional('sid', { type: 'string', demandOption: true, describe: 'the host FQDN' })
          .option('force', {
            type: 'boolean',
            default: false,
            describe: 'retire an unused token still valid (otherwise 409)',
          })
          .example('$0 souls issue-token web-1.example.org --force', 'replace a lost token'),
      run(async (ctx, a) => {
        const t = (await ctx.client().call('issueBootstrapToken', { params: { sid: a.sid }, body: { force: a.force } }))
          .body as any;
        ctx.show(
          t,
          () =>
            `bootstrap token for ${t.sid} (shown once, valid until ${t.bootstrap_token_expires_at}):\n${t.bootstrap_token}\n`,
        );
      }),
    )
    .command(
      'revoke <sid>',
      'cut a host off at once: close its stream and refuse its certificate',
      (c) =>
        c
          .positional('sid', { type: 'string', demandOption: true, describe: 'the host FQDN' })
          .option('yes', { type: 'boolean', default: false, describe: 'do not ask' })
          .example('$0 souls revoke web-1.example.org --yes', 'after a host was compromised'),
      run(async (ctx, a) => {
        await confirm(
          ctx,
          a.yes,
          `revoke ${a.sid}? Its stream is closed and its certificate refused until it is onboarded again with a forced token.`,
        );
        const r = (await ctx.client().call('revokeSoul', { params: { sid: a.sid } })).body as any;
        ctx.show(r, () => `revoked ${a.sid}\n`);
      }),
    )
    .command(
      'delete <sid>',
      'remove a host from the registry: its stream is closed and its certificate refused; registering it again starts over',
      (c) =>
        c
          .positional('sid', { type: 'string', demandOption: true, describe: 'the host FQDN' })
          .option('yes', { type: 'boolean', default: false, describe: 'do not ask' })
          .example('$0 souls delete web-1.example.org --yes', 'a decommissioned host'),
      run(async (ctx, a) => {
        await confirm(
          ctx,
          a.yes,
          `remove ${a.sid} from the registry? Its stream is closed and its certificate refused.`,
        );
        await ctx.client().call('deleteSoul', { params: { sid: a.sid } });
        // 204: no body; scripts get the same fact as JSON.
        ctx.show({ sid: a.sid, deleted: true }, () => `removed ${a.sid}\n`);
      }),
    )
    .demandCommand(1, 'name a souls command: list, get, add, covens, check, issue-token, revoke or delete');
}

/** What a coven change does, in the order an operator needs it: the new covens, what converges, what is left unmanaged. */
function covensText(r: {
  soul: { sid: string; covens: string[] };
  gained_covens: string[];
  lost_covens: string[];
  converging: boolean;
  left_incarnations: string[];
}): string {
  const lines = [
    `${r.soul.sid} now carries ${r.soul.covens.join(', ') || 'no coven'} (gained: ${r.gained_covens.join(', ') || 'none'}; lost: ${r.lost_covens.join(', ') || 'none'})`,
  ];
  if (r.converging)
    lines.push(
      `the ready incarnations of the gained covens are being brought to it; see keeperctl incarnations runs <name>`,
    );
  if (r.left_incarnations.length > 0) {
    lines.push(
      `no longer managed on this host (their files stay there, nothing was run): ${r.left_incarnations.join(', ')}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function readHostKey(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new CliError(
      ExitCode.Usage,
      `cannot read the host key file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      "pass --host-key=@<path to the host's .pub file> or the key itself",
    );
  }
}
