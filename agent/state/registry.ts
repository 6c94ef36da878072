// State modules by name. Adding one: write agent/state/<name>.ts exporting a StateModuleFactory
// (use defineState from ./shape so it keeps the read/diff/dry-run/apply/report shape), then add
// one line below.
import { createFilePresent } from './file-present';
import { createFileRendered } from './file-rendered';
import { createPkgInstalled, createPkgRemoved } from './pkg-installed';
import { createServiceReloaded, createServiceRestarted, createServiceRunning, createServiceStopped } from './service';
import { createCmdRun } from './cmd-run';
import { createGroupAbsent, createGroupPresent, createUserAbsent, createUserPresent } from './accounts-state';
import { createDirAbsent, createDirPresent, createFileAbsent, createLinkPresent } from './paths-state';
import { createLineAbsent, createLinePresent } from './line';
import { createBlockPresent } from './block';
import { createIniSet } from './ini';
import { createSysctlSet } from './sysctl';
import { createCronAbsent, createCronPresent } from './cron';
import { createSystemdUnit } from './systemd-unit';
import { createUrlFetched } from './url-fetched';
import { createArchiveExtracted } from './archive-extracted';
import { createGitCheckout } from './git-checkout';
import type { StateDeps, StateModule, StateModuleFactory } from './types';

export const STATE_MODULES: Readonly<Record<string, StateModuleFactory>> = {
  'core.pkg.installed': createPkgInstalled,
  'core.file.present': createFilePresent,
  'core.file.rendered': createFileRendered,
  'core.pkg.removed': createPkgRemoved,
  'core.service.running': createServiceRunning,
  'core.service.stopped': createServiceStopped,
  'core.service.restarted': createServiceRestarted,
  'core.service.reloaded': createServiceReloaded,
  'core.cmd.run': createCmdRun,
  'core.user.present': createUserPresent,
  'core.user.absent': createUserAbsent,
  'core.group.present': createGroupPresent,
  'core.group.absent': createGroupAbsent,
  'core.dir.present': createDirPresent,
  'core.dir.absent': createDirAbsent,
  'core.file.absent': createFileAbsent,
  'core.link.present': createLinkPresent,
  'core.line.present': createLinePresent,
  'core.line.absent': createLineAbsent,
  'core.block.present': createBlockPresent,
  'core.ini.set': createIniSet,
  'core.sysctl.set': (deps) => createSysctlSet(deps),
  'core.cron.present': createCronPresent,
  'core.cron.absent': createCronAbsent,
  'core.systemd.unit': createSystemdUnit,
  'core.url.fetched': createUrlFetched,
  'core.archive.extracted': createArchiveExtracted,
  'core.git.checkout': createGitCheckout,
};

export interface StateRegistry {
  /** The module for a step's `module` field, or undefined when this soul has no such module. */
  get(name: string): StateModule | undefined;
  names(): string[];
}

export function createStateRegistry(
  deps: StateDeps,
  factories: Readonly<Record<string, StateModuleFactory>> = STATE_MODULES,
): StateRegistry {
  // A Map, not the object: a step naming "__proto__" or "toString" must be unknown, not inherited.
  const modules = new Map<string, StateModule>(Object.entries(factories).map(([name, make]) => [name, make(deps)]));
  return {
    get: (name) => modules.get(name),
    names: () => [...modules.keys()].sort(),
  };
}
