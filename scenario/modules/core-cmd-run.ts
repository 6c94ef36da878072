import type { ModuleSpec } from './types';
import { ABS_PATH } from './core-file-present';

/** A command as argv: the program, then its arguments; no shell reads it. */
export const ARGV = {
  type: 'array',
  minItems: 1,
  maxItems: 256,
  items: { type: 'string', minLength: 1, maxLength: 65536 },
} as const;

/**
 * Runs a command. `changed` every time it runs, unless a guard says it need not run: `creates` (a
 * path that exists), `removes` (a path that does not), `unless` (a command exiting 0) or `onlyif`
 * (a command exiting non-zero). `shell: true` must be written out to run `argv[0]` with /bin/sh -c.
 */
export const coreCmdRun: ModuleSpec = {
  name: 'core.cmd.run',
  description: 'a command runs (unless a guard says it need not)',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['argv'],
    properties: {
      argv: ARGV,
      shell: { type: 'boolean' },
      cwd: ABS_PATH,
      // Names and values checked by the soul too (a name is [A-Za-z_][A-Za-z0-9_]*, a value a string).
      env: { type: 'object' },
      timeout: { type: 'integer', minimum: 1, maximum: 86400 },
      creates: ABS_PATH,
      removes: ABS_PATH,
      unless: ARGV,
      onlyif: ARGV,
    },
  },
  // `creates`/`removes` are paths tested for existence, not commands; the module itself runs `argv`.
  programParams: ['argv', 'unless', 'onlyif'],
};
