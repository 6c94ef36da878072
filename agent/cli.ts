// The `soul` command: `init` (onboard this host once), `run` (hold the stream), and for push mode over
// SSH `apply` (steps on stdin, one shot) and `facts` (agent/oneshot.ts).
// Exit codes: 0 done, 1 the command failed (reason and fix on stderr), 2 usage or configuration.
import yargs from 'yargs';
import { createLogger } from '../common/logger';
import { loadSoulConfig } from './config';
import { SoulError } from './errors';
// `init` and `run` are loaded when called: they bring the gRPC stack, which `apply` and `facts` (run
// once per SSH dispatch or check, docs/ssh.md) do not need; this halves their start-up time.
import type * as InitModule from './init';
import type * as RunModule from './run';
import { DEFAULT_SSH_STATE_DIR, soulApply, soulFacts } from './oneshot';
import { VERSION as SOUL_VERSION } from '../common/version';

const NO_TOKEN = new SoulError('no bootstrap token',
  'pass --token=<token>, set SOUL_BOOTSTRAP_TOKEN, or pipe the token on stdin (from the operator: POST /v1/souls or /v1/souls/{sid}/issue-token)', 2);

/** Token source priority (interface spec 4.4): the flag, then the environment, then stdin. */
export async function resolveToken(flag: string | undefined, env: NodeJS.ProcessEnv, stdin: NodeJS.ReadStream & { fd?: number }): Promise<string> {
  if (flag !== undefined && flag.trim() !== '') return flag.trim();
  const fromEnv = env.SOUL_BOOTSTRAP_TOKEN;
  if (fromEnv !== undefined && fromEnv.trim() !== '') return fromEnv.trim();
  if (stdin.isTTY) throw NO_TOKEN;
  const chunks: Buffer[] = [];
  for await (const c of stdin) {
    chunks.push(Buffer.from(c as Buffer));
    if (chunks.reduce((n, b) => n + b.length, 0) > 4096) break;
  }
  const token = Buffer.concat(chunks).toString('utf8').trim().split('\n')[0]?.trim() ?? '';
  if (token === '') throw NO_TOKEN;
  return token;
}

function fail(err: unknown): never {
  if (err instanceof SoulError) {
    process.stderr.write(err.render());
    process.exit(err.exitCode);
  }
  process.stderr.write(`soul: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
}

async function runInit(argv: { config: string; token?: string }): Promise<void> {
  const config = loadSoulConfig(argv.config);
  const token = await resolveToken(argv.token, process.env, process.stdin);
  const { soulInit } = require('./init') as typeof InitModule;
  const r = await soulInit({ config, token });
  process.stdout.write(`onboarded ${r.sid} through ${r.endpoint}: certificate ${r.serial}, valid until ${r.notAfter.toISOString()}; ` +
    `identity stored under ${config.paths.seed}. Start the soul with: soul run --config=${argv.config}\n`);
  process.exit(0);
}

async function runRun(argv: { config: string }): Promise<void> {
  const config = loadSoulConfig(argv.config);
  const log = createLogger({ base: { sid: config.sid } });
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  process.once('SIGINT', () => stop.abort());
  const { soulRun } = require('./run') as typeof RunModule;
  await soulRun({ config, log, signal: stop.signal });
  process.exit(0);
}

export function main(args: string[]): void {
  void yargs(args)
    .scriptName('soul')
    .version(SOUL_VERSION)
    .command('init', 'onboard this host: enroll with a bootstrap token and store the identity under paths.seed',
      (y) => y
        .option('config', { type: 'string', demandOption: true, describe: 'path to the soul configuration (YAML)' })
        .option('token', { type: 'string', describe: 'bootstrap token (else SOUL_BOOTSTRAP_TOKEN, else stdin)' }),
      (argv) => runInit(argv).catch(fail))
    .command('run', 'hold the event stream to the keeper',
      (y) => y.option('config', { type: 'string', demandOption: true, describe: 'path to the soul configuration (YAML)' }),
      (argv) => runRun(argv).catch(fail))
    .command('apply', 'push mode (SSH): apply step requests read as JSON lines on stdin with the ledger, answer on stdout',
      (y) => y.option('state-dir', { type: 'string', default: DEFAULT_SSH_STATE_DIR, describe: 'folder of the ledger (<state-dir>/<sid>/ledger)' }),
      (argv) => soulApply({ stateDir: argv['state-dir'], input: process.stdin, output: process.stdout }).then((code) => process.exit(code), fail))
    .command('facts', 'print this host\'s SID and soulprint as one JSON line',
      (y) => y,
      () => soulFacts({ output: process.stdout }).then(() => process.exit(0), fail))
    .demandCommand(1, 'name a command: init, run, apply or facts')
    .strict()
    .fail((msg, err) => {
      if (err) fail(err);
      process.stderr.write(`soul: ${msg}\n(see soul --help)\n`);
      process.exit(2);
    })
    .help()
    .parse();
}
