/**
 * soul-lint [DIR] [--format text|json|sarif] [--output FILE]
 *
 * Offline: reads the service directory only, no server and no network.
 * Exit codes: 0 no error finding, 1 at least one error finding, 2 usage or
 * I/O error (DIR missing, unreadable, output not writable).
 */
import * as fs from 'node:fs';
import yargs from 'yargs';
import { lintService, ServiceDirError, type Finding } from '../scenario';
import { formatText } from './format/text';
import { formatJson } from './format/json';
import { formatSarif } from './format/sarif';

export const FORMATS = { text: formatText, json: formatJson, sarif: formatSarif } as const;
export type Format = keyof typeof FORMATS;

export interface Io {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

const processIo: Io = { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s) };

/** Runs the CLI and returns the exit code (does not exit, so tests can call it). */
export function runCli(argv: string[], io: Io = processIo): number {
  let usageError: string | null = null;
  const args = yargs(argv)
    .scriptName('soul-lint')
    .usage('$0 [DIR]\n\nCheck a Keeper service repository offline.')
    .option('format', {
      alias: 'f',
      choices: ['text', 'json', 'sarif'] as const,
      default: 'text' as Format,
      describe: 'output format',
    })
    .option('output', { alias: 'o', type: 'string', describe: 'write the report to this file instead of stdout' })
    .strictOptions()
    .help()
    .version(false)
    .exitProcess(false)
    .fail((msg, err) => {
      usageError = msg || err?.message || 'invalid arguments';
    })
    .parseSync();
  if (usageError !== null) {
    io.stderr(`soul-lint: ${usageError}\nusage: soul-lint [DIR] [--format text|json|sarif] [--output FILE]\n`);
    return 2;
  }
  if (args.help) return 0;
  const positional = args._.map(String);
  if (positional.length > 1) {
    io.stderr('soul-lint: expected at most one directory\n');
    return 2;
  }
  const dir = positional[0] ?? '.';
  let findings: Finding[];
  try {
    findings = lintService(dir);
  } catch (e) {
    const msg = e instanceof ServiceDirError ? e.message : `cannot read ${dir}: ${(e as Error).message}`;
    io.stderr(`soul-lint: ${msg}\n`);
    return 2;
  }
  const report = FORMATS[args.format](findings, dir);
  if (args.output) {
    try {
      fs.writeFileSync(args.output, report);
    } catch (e) {
      io.stderr(`soul-lint: cannot write ${args.output}: ${(e as Error).message}\n`);
      return 2;
    }
    if (args.format !== 'text') io.stdout(formatText(findings, dir));
  } else io.stdout(report);
  return findings.some((f) => f.severity === 'error' && !f.suppressed) ? 1 : 0;
}

export function main(argv: string[]): void {
  process.exitCode = runCli(argv);
}
