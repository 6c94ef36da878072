import type { ModuleSpec } from './types';

/** A unit file's name in /etc/systemd/system: a unit name with its type suffix, never a path or an option. */
export const UNIT_FILE_NAME = {
  type: 'string',
  minLength: 3,
  maxLength: 256,
  pattern: '^[A-Za-z0-9_:@\\\\][A-Za-z0-9_.:@\\\\-]*\\.(service|timer|socket|path|target|mount|automount|slice)$',
} as const;

/** The content of a unit file: systemd starts its ExecStart= programs as root, so the module counts it as
 *  a parameter that runs a program (programParams below; scenario/modules/program-params.test.ts). */
export const UNIT_CONTENT = { type: 'string', minLength: 1, maxLength: 1048576 } as const;

/**
 * A unit (or timer) file in /etc/systemd/system with this content, unit files re-read (daemon-reload) when
 * it changed, and the unit started or stopped and enabled or not, in one step (Ansible `template` +
 * `systemd_service`). Without `content` the unit's file is left as it is.
 */
export const coreSystemdUnit: ModuleSpec = {
  name: 'core.systemd.unit',
  description: 'a systemd unit file with this content, reloaded, started or stopped, enabled or not',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: UNIT_FILE_NAME,
      content: UNIT_CONTENT,
      enabled: { type: 'boolean' },
      state: { type: 'string', pattern: '^(started|stopped)$' },
    },
  },
  programParams: ['content'],
};
