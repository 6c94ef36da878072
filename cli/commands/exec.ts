// keeperctl exec: one module of the core library, once, on the selected hosts (docs/executions.md).
// A line per host as it answers, then the output grouped by identical text (1,000 identical answers
// are one group with a count) and the summary. Exit 1 when any host failed or is unknown.
import type { Argv } from 'yargs';
import type { Ctx } from '../context';
import { CliError, ExitCode } from '../errors';
import { problemError } from '../client';
import { parseInput } from '../input';
import { confirm } from '../prompt';
import type { Handler } from './types';

interface HostAnswer {
  sid: string;
  status: string;
  output: string;
}

/** Hosts grouped by (status, output), largest group first. */
export function groupAnswers(hosts: readonly HostAnswer[]): { status: string; output: string; sids: string[] }[] {
  const groups = new Map<string, { status: string; output: string; sids: string[] }>();
  for (const h of hosts) {
    const key = `${h.status}\u0000${h.output}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { status: h.status, output: h.output, sids: [] }));
    g.sids.push(h.sid);
  }
  return [...groups.values()].sort((a, b) => b.sids.length - a.sids.length || a.status.localeCompare(b.status));
}

export function execCommand(y: Argv): Argv {
  return (
    y
      .positional('module', {
        type: 'string',
        describe: 'a core module (core.service.restarted); with --cmd, the command',
      })
      .positional('params', {
        type: 'string',
        array: true,
        describe: 'module parameters as key=value (YAML values: 3, true, [a, b])',
      })
      .option('cmd', {
        type: 'boolean',
        default: false,
        describe: 'run a command: the words after -- are its argv (core.cmd.run)',
      })
      // Not `array: true`: yargs arrays are greedy and would swallow MODULE and its key=value words;
      // a repeated option still gives an array.
      .option('coven', { type: 'string', describe: 'hosts of this coven (repeat for several)' })
      .option('sid', { type: 'string', describe: 'this host (repeat for several)' })
      .option('where', { type: 'string', describe: 'CEL over soulprint.self: only hosts whose stored facts match' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'check mode: nothing changes; shows what would' })
      .option('timeout', { type: 'number', describe: 'seconds a host may take before it is unknown (60)' })
      .option('batch', { type: 'number', describe: 'hosts per batch (all at once by default)' })
      .option('yes', { type: 'boolean', default: false, describe: 'do not ask before running on many hosts' })
      .example('$0 exec --coven web core.service.restarted name=nginx', 'restart nginx on coven web')
      .example(
        '$0 exec --where \'soulprint.self.os_release == "12"\' --cmd -- uptime',
        'a command on the Debian 12 hosts',
      )
  );
}

export function execHandler(run: Handler) {
  return run(async (ctx: Ctx, a: any) => {
    const words: string[] = [
      ...(a.module !== undefined ? [String(a.module)] : []),
      ...((a.params ?? []) as unknown[]).map(String),
      ...((a['--'] ?? []) as unknown[]).map(String),
      ...(a._ ?? []).slice(1).map(String),
    ];
    let module: string;
    let params: Record<string, unknown>;
    if (a.cmd) {
      if (words.length === 0)
        throw new CliError(
          ExitCode.Usage,
          'exec --cmd needs a command',
          'write keeperctl exec --coven web --cmd -- uptime',
        );
      module = 'core.cmd.run';
      params = { argv: words };
    } else {
      if (words.length === 0)
        throw new CliError(
          ExitCode.Usage,
          'exec needs a module',
          'write keeperctl exec --coven web core.service.restarted name=nginx',
        );
      module = words[0]!;
      params = parseInput(words.slice(1), undefined) ?? {};
    }
    if (!a.coven && !a.sid && a.where === undefined)
      throw new CliError(ExitCode.Usage, 'exec needs a target', 'give --coven, --sid or --where');
    const list = (v: unknown) => (v === undefined ? undefined : ([] as unknown[]).concat(v).map(String));
    const [covens, sids] = [list(a.coven), list(a.sid)];
    const body: Record<string, unknown> = {
      module,
      params,
      target: {
        ...(covens ? { covens } : {}),
        ...(sids ? { sids } : {}),
        ...(a.where !== undefined ? { where: a.where } : {}),
      },
      dry_run: a.dryRun === true,
      ...(a.timeout ? { timeout: a.timeout } : {}),
      ...(a.batch ? { batch: a.batch } : {}),
    };
    const client = ctx.client();
    let r = await client.request('post', '/v1/executions', { body });
    if (r.status === 428) {
      await confirm(
        ctx,
        a.yes === true,
        (r.body as { detail?: string }).detail?.replace(/: send again.*/, '') + `; run ${module} on them?`,
      );
      r = await client.request('post', '/v1/executions', { body: { ...body, confirm: true } });
    }
    if (r.status >= 400) throw problemError(r);
    const started = r.body as { id: string; selected: number };
    const quiet = ctx.format !== 'table';
    if (!quiet)
      ctx.note(
        `execution ${started.id}: ${module} on ${started.selected} host${started.selected === 1 ? '' : 's'}${a.dryRun ? ' (dry run)' : ''}`,
      );
    let last: string | undefined;
    for (let drops = 0; ; ) {
      const s = await client.events('streamExecutionEvents', { id: started.id }, last, (e) => {
        const d = e.data as HostAnswer;
        if (e.event === 'host' && !quiet)
          process.stdout.write(
            `${d.sid}  ${d.status}  ${(d.output.split('\n').find((l) => l.trim()) ?? '').slice(0, 100)}\n`,
          );
        return e.event === 'end';
      });
      last = s.lastEventId;
      if (s.done) break;
      if (++drops > 20)
        throw new CliError(
          ExitCode.Server,
          `lost the event stream of execution ${started.id}`,
          `see keeperctl -o json exec ... or GET /v1/executions/${started.id}`,
        );
    }
    const e = (await client.call('getExecution', { params: { id: started.id } })).body as {
      summary: Record<string, number>;
      hosts: HostAnswer[];
    };
    ctx.show(e, () => {
      const groups = groupAnswers(e.hosts).map(
        (g) =>
          `${g.sids.length} host${g.sids.length === 1 ? '' : 's'} ${g.status}${g.sids.length <= 3 ? ` (${g.sids.join(', ')})` : ''}:\n${g.output
            .split('\n')
            .map((l) => `    ${l}`)
            .join('\n')}`,
      );
      const s = e.summary;
      return `\n${groups.join('\n')}\nok ${s['ok']}, changed ${s['changed']}, failed ${s['failed']}, unknown ${s['unknown']}\n`;
    });
    if ((e.summary['failed'] ?? 0) + (e.summary['unknown'] ?? 0) > 0) process.exitCode = ExitCode.Failed;
  });
}
