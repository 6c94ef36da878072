// The `soul` command line: commands, their options, help and usage errors. Parsed with node:util's
// parseArgs rather than a CLI framework: the soul starts on every host and, in push mode, once per
// SSH dispatch, and loading yargs was a sixth of its start-up (docs/performance.md).
import { parseArgs } from 'node:util';

/** Where `soul apply` keeps its ledger when the keeper names no other folder. */
export const DEFAULT_SSH_STATE_DIR = '/var/lib/soul/ssh';

interface OptionSpec {
  describe: string;
  required?: true;
  default?: string;
}
interface CommandSpec {
  describe: string;
  options: Record<string, OptionSpec>;
}

const CONFIG: OptionSpec = { describe: 'path to the soul configuration (YAML)', required: true };

export const COMMANDS = {
  init: {
    describe: 'onboard this host: enroll with a bootstrap token and store the identity under paths.seed',
    options: { config: CONFIG, token: { describe: 'bootstrap token (else SOUL_BOOTSTRAP_TOKEN, else stdin)' } },
  },
  run: { describe: 'hold the event stream to the keeper', options: { config: CONFIG } },
  status: {
    describe:
      'which keeper this soul is on (kid, endpoint, since when, session), its SID and certificate, the ledger size; exit 0 when connected',
    options: { config: CONFIG },
  },
  apply: {
    describe: 'push mode (SSH): apply step requests read as JSON lines on stdin with the ledger, answer on stdout',
    options: {
      'state-dir': { describe: 'folder of the ledger (<state-dir>/<sid>/ledger)', default: DEFAULT_SSH_STATE_DIR },
    },
  },
  facts: { describe: "print this host's SID and soulprint as one JSON line", options: {} },
} satisfies Record<string, CommandSpec>;

export type SoulCommand = keyof typeof COMMANDS;

export type ParsedArgs =
  | { kind: 'help'; text: string }
  | { kind: 'version' }
  | { kind: 'usage'; message: string }
  | { kind: 'command'; command: SoulCommand; options: Record<string, string | undefined> };

/** What `soul <args>` asks for. Options take `--name=value` or `--name value`; unknown ones are refused. */
export function parseSoulArgs(args: string[]): ParsedArgs {
  const first = args.findIndex((a) => !a.startsWith('-'));
  const before = first === -1 ? args : args.slice(0, first);
  const name = first === -1 ? undefined : args[first]!;
  if (name === undefined || before.length > 0) {
    if (before.includes('--version')) return { kind: 'version' };
    if (before.includes('--help') || before.includes('-h')) return { kind: 'help', text: topHelp() };
    if (before.length > 0)
      return { kind: 'usage', message: `unknown option ${before[0]} (options go after the command)` };
    return { kind: 'usage', message: 'name a command: init, run, status, apply or facts' };
  }
  if (!Object.hasOwn(COMMANDS, name))
    return { kind: 'usage', message: `unknown command "${name}": name one of init, run, status, apply or facts` };
  const command = name as SoulCommand;
  const spec: CommandSpec = COMMANDS[command];
  const rest = args.slice(first + 1);
  if (rest.includes('--help') || rest.includes('-h')) return { kind: 'help', text: commandHelp(command) };
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: rest,
      strict: true,
      allowPositionals: true,
      options: Object.fromEntries(Object.keys(spec.options).map((o) => [o, { type: 'string' as const }])),
    }));
  } catch (err) {
    const e = err as Error & { code?: string };
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const option = /'([^']+)'/.exec(e.message)?.[1] ?? e.message;
      return { kind: 'usage', message: `the ${command} command has no option ${option}` };
    }
    return { kind: 'usage', message: `the ${command} command: ${e.message}` };
  }
  if (positionals.length > 0)
    return { kind: 'usage', message: `the ${command} command takes no argument "${positionals[0]}"` };
  const options: Record<string, string | undefined> = {};
  for (const [option, o] of Object.entries(spec.options)) {
    const value = values[option] as string | undefined;
    if (value === undefined && o.required)
      return { kind: 'usage', message: `the ${command} command needs --${option}=<${option}> (${o.describe})` };
    options[option] = value ?? o.default;
  }
  return { kind: 'command', command, options };
}

function topHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return (
    'soul <command> [options]\n\nCommands:\n' +
    Object.entries(COMMANDS)
      .map(([c, s]) => `  soul ${c.padEnd(width)}  ${s.describe}`)
      .join('\n') +
    '\n\nOptions:\n  --help     show help (soul <command> --help: its options)\n  --version  show the version\n'
  );
}

function commandHelp(command: SoulCommand): string {
  const spec: CommandSpec = COMMANDS[command];
  const lines = Object.entries(spec.options).map(
    ([o, s]) =>
      `  --${o}=<${o}>  ${s.describe}${s.required ? ' [required]' : ''}${s.default !== undefined ? ` [default: ${s.default}]` : ''}`,
  );
  return `soul ${command} [options]\n\n${spec.describe}\n${lines.length > 0 ? `\nOptions:\n${lines.join('\n')}\n` : ''}`;
}
