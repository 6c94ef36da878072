// The `soul` command: `init` (onboard this host once), `run` (hold the stream), and for push mode over
// SSH `apply` (steps on stdin, one shot) and `facts` (agent/oneshot.ts).
// Exit codes: 0 done, 1 the command failed (reason and fix on stderr), 2 usage or configuration.
import { fatalLine } from '../common/journal';
import { createLogger } from '../common/logger';
import { loadSoulConfig } from './config';
import { SoulError } from './errors';
import { nextStep } from './next-step';
// Each command's code is loaded when it is called: `init` and `run` bring the stream stack, which
// `apply` and `facts` (once per SSH dispatch or check, docs/ssh.md) do not need, and `apply` brings
// the state modules and child processes, which `run` loads only when its first step arrives.
import type * as InitModule from './init';
import type * as OneShotModule from './oneshot';
import type * as RunModule from './run';
import type * as StatusModule from './status';
import { parseSoulArgs } from './cli-args';
import { VERSION as SOUL_VERSION } from '../common/version';

const NO_TOKEN = new SoulError(
  'no bootstrap token',
  'pass --token=<token>, set SOUL_BOOTSTRAP_TOKEN, or pipe the token on stdin (from the operator: POST /v1/souls or /v1/souls/{sid}/issue-token)',
  2,
);

/** Token source priority (interface spec 4.4): the flag, then the environment, then stdin. */
export async function resolveToken(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  stdin: NodeJS.ReadStream & { fd?: number },
): Promise<string> {
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
    process.stderr.write(fatalLine(err.render()));
    process.exit(err.exitCode);
  }
  process.stderr.write(fatalLine(`soul: ${(err as Error)?.message ?? String(err)}`));
  process.exit(1);
}

async function runInit(argv: { config: string; token?: string }): Promise<void> {
  const config = loadSoulConfig(argv.config);
  const token = await resolveToken(argv.token, process.env, process.stdin);
  const { soulInit } = require('./init') as typeof InitModule;
  const r = await soulInit({ config, token });
  process.stdout.write(
    `onboarded ${r.sid} through ${r.endpoint}: certificate ${r.serial}, valid until ${r.notAfter.toISOString()}; ` +
      `identity stored under ${config.paths.seed}. ${nextStep(argv.config, config.paths.seed)}\n`,
  );
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

async function runStatus(argv: { config: string }): Promise<void> {
  const config = loadSoulConfig(argv.config);
  const { statusReport } = require('./status') as typeof StatusModule;
  const r = await statusReport({ sid: config.sid, seed: config.paths.seed });
  process.stdout.write(`${r.lines.join('\n')}\n`);
  process.exit(r.code);
}

const oneShot = () => require('./oneshot') as typeof OneShotModule;

export function main(args: string[]): void {
  const parsed = parseSoulArgs(args);
  switch (parsed.kind) {
    case 'help':
      process.stdout.write(parsed.text);
      process.exit(0);
      break;
    case 'version':
      process.stdout.write(`${SOUL_VERSION}\n`);
      process.exit(0);
      break;
    case 'usage':
      process.stderr.write(`soul: ${parsed.message}\n(see soul --help)\n`);
      process.exit(2);
      break;
    case 'command': {
      const o = parsed.options;
      switch (parsed.command) {
        case 'init':
          void runInit({ config: o.config!, token: o.token }).catch(fail);
          break;
        case 'run':
          void runRun({ config: o.config! }).catch(fail);
          break;
        case 'status':
          void runStatus({ config: o.config! }).catch(fail);
          break;
        case 'apply':
          void oneShot()
            .soulApply({ stateDir: o['state-dir']!, input: process.stdin, output: process.stdout })
            .then((code) => process.exit(code), fail);
          break;
        case 'facts':
          void oneShot()
            .soulFacts({ output: process.stdout })
            .then(() => process.exit(0), fail);
          break;
      }
    }
  }
}
