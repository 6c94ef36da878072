import type { ModuleSpec } from './types';

/** Octal file mode as text, e.g. "0644" or "644". */
export const FILE_MODE = { type: 'string', pattern: '^0?[0-7]{3,4}$' } as const;
/** An absolute path; `..` segments are refused so a plan cannot climb out of the directory it names. */
export const ABS_PATH = { type: 'string', minLength: 2, pattern: '^/(?!.*(^|/)\\.\\.(/|$)).*$' } as const;

/** A file with the given content exists. */
export const coreFilePresent: ModuleSpec = {
  name: 'core.file.present',
  description: 'a file with the given content exists',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['path', 'content'],
    properties: {
      path: ABS_PATH,
      content: { type: 'string' },
      mode: FILE_MODE,
    },
  },
};
