import type { ModuleSpec } from './types';

/** Octal file mode as text, e.g. "0644" or "644". */
export const FILE_MODE = { type: 'string', pattern: '^0?[0-7]{3,4}$' } as const;
/** An absolute path; `..` segments are refused so a plan cannot climb out of the directory it names. */
export const ABS_PATH = { type: 'string', minLength: 2, pattern: '^/(?!.*(^|/)\\.\\.(/|$)).*$' } as const;

/** A user or group: a name as in /etc/passwd, /etc/group, or a numeric id. */
export const ACCOUNT = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  pattern: '^([a-z_][a-z0-9_.-]*\\$?|[0-9]+)$',
} as const;
/** argv of a command checking the candidate file before it replaces the live one; `%s` is its path. No shell. */
export const VALIDATE = {
  type: 'array',
  minItems: 1,
  maxItems: 64,
  items: { type: 'string', minLength: 1, maxLength: 4096 },
  contains: { type: 'string', pattern: '%s' },
} as const;
/** The parameters every file module shares beside its content. */
export const FILE_COMMON = {
  path: ABS_PATH,
  mode: FILE_MODE,
  owner: ACCOUNT,
  group: ACCOUNT,
  validate: VALIDATE,
} as const;

/** A file with the given content exists. */
export const coreFilePresent: ModuleSpec = {
  name: 'core.file.present',
  description: 'a file with the given content exists',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['path', 'content'],
    properties: {
      ...FILE_COMMON,
      content: { type: 'string' },
    },
  },
  programParams: ['validate'],
};
