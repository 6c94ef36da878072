// keeperctl: the operator's command line for a keeper's Operator API.
//
// A program of its own rather than more subcommands of `keeper`: `keeper` is the server (it needs
// the server's config, database and secrets store); keeperctl runs wherever operators are (a laptop,
// a CI job) and needs only a URL, a token and the CA. Every call it makes is found by operationId in
// the keeper's OpenAPI document, so it cannot drift from the route table (docs/cli.md).
import yargs, { type Argv } from 'yargs';
import fs from 'node:fs';
import { VERSION } from '../common/version';
import { activityHandler, activityOptions } from './commands/activity';
import { archonsCommand } from './commands/archons';
import { incarnationsCommand, runCommand, runHandler } from './commands/incarnations';
import { execCommand, execHandler } from './commands/exec';
import { servicesCommand } from './commands/services';
import { soulsCommand } from './commands/souls';
import type { Handler } from './commands/types';
import { KeeperClient } from './client';
import { configDir, readConfig, removeCluster, saveCluster, useCluster, checkClusterName } from './config';
import { Ctx, type GlobalOptions } from './context';
import { CliError, ExitCode } from './errors';
import { table } from './output';

function report(err: unknown): never {
  if (err instanceof CliError) {
    process.stderr.write(`keeperctl: ${err.message}\n`);
    if (err.hint) process.stderr.write(`  fix: ${err.hint}\n`);
    process.exit(err.code);
  }
  process.stderr.write(`keeperctl: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(ExitCode.Server);
}

const handler: Handler = (body) => async (argv) => {
  try {
    await body(new Ctx(argv as GlobalOptions), argv);
  } catch (err) {
    report(err);
  }
};

async function readToken(argv: { 'token-file'?: string; 'token-stdin'?: boolean }): Promise<string> {
  if (argv['token-file']) return fs.readFileSync(argv['token-file'], 'utf8').trim();
  if (argv['token-stdin'] || !process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8').trim();
  }
  throw new CliError(
    ExitCode.Usage,
    'no token given',
    'pass --token-file <file> or pipe the token on standard input (--token-stdin)',
  );
}

function clusterCommands(y: Argv): Argv {
  return y
    .command(
      'login <cluster>',
      'save a cluster (URL, pinned CA, token) under a name and make it current',
      (c) =>
        c
          .positional('cluster', { type: 'string', demandOption: true, describe: 'a name for this cluster' })
          .option('token-stdin', { type: 'boolean', default: false, describe: 'read the token from standard input' })
          .example(
            '$0 login prod --url https://keeper.example.org:8080 --ca ca.pem --token-file admin.jwt',
            'then: keeperctl souls list',
          ),
      handler(async (_ctx, a) => {
        checkClusterName(a.cluster);
        if (!a.url)
          throw new CliError(ExitCode.Usage, 'login needs --url', 'for example --url https://keeper.example.org:8080');
        const token = await readToken(a);
        if (!token)
          throw new CliError(
            ExitCode.Usage,
            'the token is empty',
            'pass the operator JWT (keeper init --credential-out, or keeperctl archons token)',
          );
        // Prove the URL, the CA and the token before saving anything.
        const client = new KeeperClient({ url: a.url, token, ...(a.ca ? { caFile: a.ca } : {}) });
        const probe = await client.request('get', '/v1/souls', { query: { limit: 1 } });
        if (probe.status === 401)
          throw new CliError(
            ExitCode.Auth,
            `the keeper at ${a.url} does not accept this token`,
            'ask a cluster-admin for a new one (keeperctl archons token <aid>)',
          );
        if (probe.status >= 500 || probe.status === 404)
          throw new CliError(
            ExitCode.Server,
            `the keeper at ${a.url} answered ${probe.status}`,
            'check the URL points at the Operator API listener',
          );
        saveCluster(configDir(), a.cluster, { url: a.url, ...(a.ca ? { ca_file: a.ca } : {}) }, token);
        useCluster(configDir(), a.cluster);
        process.stdout.write(`logged in to ${a.cluster} (${a.url}); it is now the current cluster\n`);
      }),
    )
    .command(
      'logout <cluster>',
      'forget a cluster and its token',
      (c) =>
        c
          .positional('cluster', { type: 'string', demandOption: true })
          .example('$0 logout staging', 'removes the saved token of staging'),
      handler(async (_ctx, a) => {
        removeCluster(configDir(), a.cluster);
        process.stdout.write(`forgot ${a.cluster}\n`);
      }),
    )
    .command(
      'use <cluster>',
      'make a saved cluster the current one',
      (c) =>
        c
          .positional('cluster', { type: 'string', demandOption: true })
          .example('$0 use staging', 'later commands talk to staging'),
      handler(async (_ctx, a) => {
        useCluster(configDir(), a.cluster);
        process.stdout.write(`current cluster: ${a.cluster}\n`);
      }),
    )
    .command(
      'clusters',
      'list saved clusters',
      (c) => c.example('$0 clusters', 'names, URLs and which one is current'),
      handler(async (ctx) => {
        const c = readConfig(configDir());
        const rows = Object.entries(c.clusters).map(([n, e]) => ({
          name: n,
          url: e.url,
          ca_file: e.ca_file ?? null,
          current: n === c.current,
        }));
        ctx.show({ current: c.current ?? null, clusters: rows }, () =>
          table(rows, [
            { header: 'CURRENT', value: (r) => (r.current ? '*' : '') },
            { header: 'NAME', value: (r) => r.name },
            { header: 'URL', value: (r) => r.url },
            { header: 'CA', value: (r) => r.ca_file },
          ]),
        );
      }),
    );
}

export function buildCli(args: string[]): Argv {
  const cli: Argv = yargs(args);
  return (
    cli
      .scriptName('keeperctl')
      .version(VERSION)
      .usage(
        '$0 <command> [options]\n\nThe operator command line of Keeper. Exit codes: 0 ok, 1 a run failed, 2 usage or input refused, 3 auth, 4 not found, 5 conflict, 6 server or network.',
      )
      .option('cluster', {
        type: 'string',
        global: true,
        describe: 'saved cluster to use (default: the current one; env KEEPER_CLUSTER)',
      })
      .option('url', {
        type: 'string',
        global: true,
        describe: 'keeper URL, overriding the saved cluster (env KEEPER_URL)',
      })
      .option('ca', { type: 'string', global: true, describe: "PEM file of the keeper's CA, pinned (env KEEPER_CA)" })
      .option('token-file', {
        type: 'string',
        global: true,
        describe: 'file holding the operator token (env KEEPER_TOKEN holds the token itself)',
      })
      .option('output', {
        alias: 'o',
        choices: ['table', 'json', 'yaml'] as const,
        default: 'table' as const,
        global: true,
        describe: 'output format',
      })
      .command('souls', 'hosts: list, get, add, covens, check, issue-token, revoke, delete', (y) =>
        soulsCommand(y, handler).example('$0 souls list', 'every soul'),
      )
      .command('services', 'the catalog: add, list, get, delete, publish, versions, version, yank', (y) =>
        servicesCommand(y, handler).example('$0 services list', 'the catalog'),
      )
      .command(
        'incarnations',
        'incarnations: list, create, get, history, runs, run-report, plan, plans, plan-report, apply-plan, unlock, upgrade, drift, delete',
        (y) => incarnationsCommand(y, handler).example('$0 incarnations list', 'every incarnation'),
      )
      .command('archons', 'operators: list, get, create, role, delete, token, revoke-tokens', (y) =>
        archonsCommand(y, handler).example('$0 archons list', 'every operator'),
      )
      .command(
        'activity',
        'who changed what, when and from where, newest first (--actor, --target, --since, --until)',
        (y) => activityOptions(y),
        activityHandler(handler),
      )
      .command(
        'run <name> <operation>',
        'run an operation of an incarnation and follow it',
        (y) => runCommand(y),
        runHandler(handler),
      )
      .command(
        'exec [module] [params..]',
        'run one module (or --cmd -- a command) once on selected hosts and show their answers',
        (y) => execCommand(y),
        execHandler(handler),
      )
      .command(
        'completion',
        'print the shell completion script (bash, or zsh when $SHELL is zsh)',
        (y) =>
          y
            .example('$0 completion >> ~/.bashrc', 'tab completion in bash')
            .example('SHELL=zsh $0 completion >> ~/.zshrc', 'in zsh'),
        () => {
          cli.showCompletionScript();
        },
      )
      // The completion protocol (--get-yargs-completions) under a hidden name: `completion` above is
      // the documented command, with its own --help and examples.
      .completion('__completion-script', false)
      .example(
        '$0 login prod --url https://keeper.example.org:8080 --ca ca.pem --token-file admin.jwt',
        'save a cluster',
      )
      .example('$0 run motd-demo create --input message=hello', 'apply, following progress')
      .wrap(Math.min(120, process.stdout.columns ?? 100))
      .demandCommand(1, 'name a command; keeperctl --help lists them')
      .recommendCommands()
      .strict()
      .fail((msg, err) => {
        if (err) report(err);
        process.stderr.write(
          `keeperctl: ${msg}\n  fix: see keeperctl --help, or keeperctl <command> --help for examples\n`,
        );
        process.exit(ExitCode.Usage);
      })
      .help()
  );
}

export function main(args: string[]): void {
  void clusterCommands(buildCli(args)).parseAsync();
}
