import type { ModuleSpec } from './types';

/** A unit name as systemctl takes it ("nginx", "nginx.service", "getty@tty1.service"); never an option. */
export const UNIT_NAME = {
  type: 'string',
  minLength: 1,
  maxLength: 256,
  pattern: '^[A-Za-z0-9_:@\\\\][A-Za-z0-9_.:@\\\\-]*$',
} as const;

const named = (extra: Record<string, unknown> = {}) => ({
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  // daemon_reload: re-read unit files before reading the unit, in every real run (Ansible's
  // systemd daemon_reload); a unit file an earlier step wrote or removed is re-read without it.
  properties: { name: UNIT_NAME, daemon_reload: { type: 'boolean' }, ...extra },
});

/** The service is running (and, with `enabled`, started at boot or not). */
export const coreServiceRunning: ModuleSpec = {
  name: 'core.service.running',
  description: 'a service is running (and enabled or disabled at boot)',
  params: named({ enabled: { type: 'boolean' } }),
};

/** The service is stopped (and, with `enabled`, started at boot or not). */
export const coreServiceStopped: ModuleSpec = {
  name: 'core.service.stopped',
  description: 'a service is stopped (and enabled or disabled at boot)',
  params: named({ enabled: { type: 'boolean' } }),
};

/** Restarts the service each time the step runs: meant for `onchanges:` (soul-lint requires a trigger). */
export const coreServiceRestarted: ModuleSpec = {
  name: 'core.service.restarted',
  description: 'a service is restarted when the step is triggered (onchanges)',
  params: named(),
};

/** Reloads the service (its configuration, same main process) each time the step runs: meant for `onchanges:`. */
export const coreServiceReloaded: ModuleSpec = {
  name: 'core.service.reloaded',
  description: 'a service reloads its configuration when the step is triggered (onchanges)',
  params: named(),
};

/** Modules that act every time they run, so a task using them needs a trigger (`onchanges:` or `when:`). */
export const TRIGGERED_MODULES: ReadonlySet<string> = new Set([coreServiceRestarted.name, coreServiceReloaded.name]);
