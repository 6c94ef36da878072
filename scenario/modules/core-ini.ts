import type { ModuleSpec } from './types';
import { ABS_PATH } from './core-file-present';

/** An ini section or key name: one line, no brackets in a section, no `=` in a key. */
const SECTION = { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[^\\n\\r\\[\\]]*$' } as const;
const KEY = { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[^\\n\\r=;#\\[][^\\n\\r=]*$' } as const;

/** A key of an ini file's section has a value; the rest of the file (comments, order, spacing) is kept. */
export const coreIniSet: ModuleSpec = {
  name: 'core.ini.set',
  description: "a key in an ini file's section has the given value",
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['path', 'key', 'value'],
    properties: {
      path: ABS_PATH,
      section: SECTION,
      key: KEY,
      value: { type: ['string', 'integer', 'boolean'], maxLength: 65536, pattern: '^[^\\n\\r]*$' },
      create: { type: 'boolean' },
      spaces: { type: 'boolean' },
    },
  },
  check: (p) => {
    const key = p['key'];
    return typeof key === 'string' && key !== key.trim()
      ? [{ param: 'key', message: 'parameter "key" starts or ends with a space; write the key without them' }]
      : [];
  },
};
