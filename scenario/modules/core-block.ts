import type { ModuleSpec } from './types';
import { ABS_PATH } from './core-file-present';
import { REGEXP, insertProblems } from './core-line';

/** The default marker: `# BEGIN KEEPER <name>` ... `# END KEEPER <name>`. */
export const DEFAULT_MARKER = '# {mark} KEEPER {name}';

/** A block of lines between two marker lines holds `content`; empty content removes the block and
 *  its markers. A new block goes after/before a match, at the end by default. */
export const coreBlockPresent: ModuleSpec = {
  name: 'core.block.present',
  description: 'a marked block of lines in a file holds the given content (empty: no block)',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['path', 'name', 'content'],
    properties: {
      path: ABS_PATH,
      name: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^\\n\\r]*$' },
      content: { type: 'string' },
      marker: { type: 'string', minLength: 1, maxLength: 4096, pattern: '^[^\\n\\r]*\\{mark\\}[^\\n\\r]*$' },
      insertafter: REGEXP,
      insertbefore: REGEXP,
      create: { type: 'boolean' },
    },
  },
  check: (p) => insertProblems(p),
};
