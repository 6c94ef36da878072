import type { ModuleSpec } from './types';

/** A kernel parameter, dotted as `sysctl` names it: net.ipv4.ip_forward. */
export const SYSCTL_NAME = {
  type: 'string',
  minLength: 3,
  maxLength: 256,
  pattern: '^[a-z0-9_]+(\\.[A-Za-z0-9_:-]+)+$',
} as const;
/** The name under /etc/sysctl.d, without `.conf`. */
export const SYSCTL_FILE = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]*$',
} as const;

/** A kernel parameter has a value now (/proc/sys) and at every boot (/etc/sysctl.d/<file>.conf). */
export const coreSysctlSet: ModuleSpec = {
  name: 'core.sysctl.set',
  description: 'a kernel parameter has a value, live and in /etc/sysctl.d',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'value'],
    properties: {
      name: SYSCTL_NAME,
      value: { type: ['string', 'integer'], minLength: 1, maxLength: 4096, pattern: '^[^\\n\\r]*\\S[^\\n\\r]*$' },
      file: SYSCTL_FILE,
    },
  },
};
