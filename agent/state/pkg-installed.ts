// core.pkg.installed { name, version? }: the package is installed (at `version` when given).
// The state says what should be true; the execution module picked for this host's facts
// (agent/exec/registry.ts) says how. The name is validated before any command is built.
import { selectPackageManager } from '../exec/registry';
import type { PackageManager, PackageState } from '../exec/types';
import { readParams, requireString, optionalString } from './params';
import { defineState } from './shape';
import type { StateDeps, StateModule } from './types';

interface PkgParams {
  name: string;
  version?: string;
  pm: PackageManager;
}

export function createPkgInstalled(deps: StateDeps): StateModule {
  return defineState<PkgParams, PackageState>({
    name: 'core.pkg.installed',
    parse(raw) {
      const p = readParams(raw, ['name', 'version']);
      const name = requireString(p, 'name');
      const version = optionalString(p, 'version');
      // Selecting the platform runs nothing; validation happens here, before read() runs a command.
      const pm = selectPackageManager(deps.facts, deps.runner, undefined, deps.installed);
      pm.validate(name, version);
      return version === undefined ? { name, pm } : { name, version, pm };
    },
    read: (p) => p.pm.read(p.name, p.version),
    diff(p, current) {
      if (current.satisfied) return null;
      const to = p.version ?? current.candidate ?? 'latest';
      const from = current.installed ? current.version ?? 'another version' : null;
      const summary = current.installed
        ? `change ${p.name} from ${from} to ${to} with ${p.pm.tool}`
        : `install ${p.name}${p.version ? ` ${p.version}` : ''} with ${p.pm.tool}`;
      return { summary, diff: { package: p.name, from, to } };
    },
    describe: (p, current) => `${p.name}${current.version ? ` ${current.version}` : ''} is already installed`,
    apply: (p) => p.pm.install(p.name, p.version),
  });
}
