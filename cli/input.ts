// A run's input from the command line: --input-file (a YAML or JSON mapping), then each
// --input key=value on top. Values are read as YAML scalars (3 is a number, true a boolean,
// "3" a string); dotted keys build nested mappings (db.port=5432).
import fs from 'node:fs';
import yaml from 'js-yaml';
import { CliError, ExitCode } from './errors';

const KEY = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

export function parseInput(
  pairs: readonly string[] | undefined,
  file: string | undefined,
): Record<string, unknown> | undefined {
  let input: Record<string, unknown> | undefined;
  if (file !== undefined) {
    let doc: unknown;
    try {
      doc = yaml.load(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      throw new CliError(
        ExitCode.Usage,
        `--input-file ${file}: ${(err as Error).message}`,
        'give a YAML or JSON mapping of input names to values',
      );
    }
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
      throw new CliError(
        ExitCode.Usage,
        `--input-file ${file}: the document must be a mapping of input names to values`,
        'for example:  message: hello',
      );
    }
    input = doc as Record<string, unknown>;
  }
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    if (eq < 0 || !KEY.test(key)) {
      throw new CliError(
        ExitCode.Usage,
        `--input ${JSON.stringify(pair)} is not key=value`,
        'write --input name=value (dotted names for nested values: --input db.port=5432)',
      );
    }
    const raw = pair.slice(eq + 1);
    let value: unknown;
    try {
      value = yaml.load(raw);
    } catch {
      value = raw;
    }
    if (value === null && raw !== 'null' && raw !== '~') value = raw;
    input ??= {};
    const parts = key.split('.');
    let node = input;
    for (const p of parts.slice(0, -1)) {
      const next = node[p];
      if (next === undefined || next === null || typeof next !== 'object' || Array.isArray(next)) node[p] = {};
      node = node[p] as Record<string, unknown>;
    }
    node[parts[parts.length - 1]!] = value;
  }
  return input;
}

/** `--replace-input`: the given input is the whole input (else it is merged over the last one, docs/runs.md). */
export const replaceInputOption = {
  type: 'boolean',
  default: false,
  describe: 'the given input is the whole input (default: merged over the last input; --input k=null removes k)',
} as const;
export const inputModeBody = (replace: boolean | undefined) => (replace ? { input_mode: 'replace' as const } : {});

/** What keeperctl says after a merged start: the keys the keeper kept from the last input (values not shown: some are secret references). */
export function keptLine(
  given: Record<string, unknown> | undefined,
  used: Record<string, unknown> | undefined,
): string | undefined {
  if (given === undefined || used === undefined) return undefined;
  const kept = Object.keys(used).filter((k) => !Object.prototype.hasOwnProperty.call(given, k));
  return kept.length > 0 ? `kept from the last input: ${kept.join(', ')}` : undefined;
}

/**
 * Per-host input (docs/incarnations.md "Per-host input"): `--host-input-file` is a YAML or JSON
 * mapping with `hosts:` (by sid) and `covens:` (by coven), as Ansible's host_vars/group_vars; each
 * `--host-input <sid>=<file>` sets one host's entry from a YAML mapping of input names, on top.
 */
export function parseHostInput(
  pairs: readonly string[] | undefined,
  file: string | undefined,
): { hosts?: Record<string, unknown>; covens?: Record<string, unknown> } | undefined {
  const load = (f: string, flag: string): Record<string, unknown> => {
    let doc: unknown;
    try {
      doc = yaml.load(fs.readFileSync(f, 'utf8'));
    } catch (err) {
      throw new CliError(ExitCode.Usage, `${flag} ${f}: ${(err as Error).message}`, 'give a YAML or JSON mapping');
    }
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
      throw new CliError(ExitCode.Usage, `${flag} ${f}: the document must be a mapping`, 'for example:  port: 8081');
    return doc as Record<string, unknown>;
  };
  let out: { hosts?: Record<string, unknown>; covens?: Record<string, unknown> } | undefined;
  if (file !== undefined) {
    const doc = load(file, '--host-input-file');
    const extra = Object.keys(doc).filter((k) => k !== 'hosts' && k !== 'covens');
    if (extra.length > 0)
      throw new CliError(
        ExitCode.Usage,
        `--host-input-file ${file}: unknown key(s) ${extra.join(', ')}; the file has hosts: and covens: only`,
        'for example:\n  hosts:\n    db-1.example.com: {port: 5433}\n  covens:\n    eu: {region: eu-west}',
      );
    out = doc as typeof out;
  }
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw new CliError(
        ExitCode.Usage,
        `--host-input ${JSON.stringify(pair)} is not <sid>=<file>`,
        'write --host-input db-1.example.com=db-1.yml (a YAML mapping of input names to values)',
      );
    out ??= {};
    out.hosts = { ...(out.hosts ?? {}), [pair.slice(0, eq)]: load(pair.slice(eq + 1), '--host-input') };
  }
  return out;
}

export const hostInputOptions = {
  'host-input-file': {
    type: 'string',
    describe: 'YAML/JSON file with per-host input: hosts: {<sid>: {...}} and covens: {<coven>: {...}}',
  },
  'host-input': {
    type: 'string',
    array: true,
    describe: "one host's input: <sid>=<file> (a YAML mapping of input names; repeat for several)",
  },
} as const;
