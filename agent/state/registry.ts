// State modules by name. Adding one: write agent/state/<name>.ts exporting a StateModuleFactory
// (use defineState from ./shape so it keeps the read/diff/dry-run/apply/report shape), then add
// one line below.
import { createFilePresent } from './file-present';
import { createFileRendered } from './file-rendered';
import { createPkgInstalled } from './pkg-installed';
import type { StateDeps, StateModule, StateModuleFactory } from './types';

export const STATE_MODULES: Readonly<Record<string, StateModuleFactory>> = {
  'core.pkg.installed': createPkgInstalled,
  'core.file.present': createFilePresent,
  'core.file.rendered': createFileRendered,
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
