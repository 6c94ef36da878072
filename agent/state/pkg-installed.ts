// core.pkg.installed { name, version? } and core.pkg.removed { name, purge? }: `name` is one package
// or a list, applied in one package-manager call. The state says what should be true; the execution
// module picked for this host's facts (agent/exec/registry.ts) says how. Names are validated before
// any command is built.
import { selectPackageManager } from '../exec/registry';
import type { PackageManager, PackageState } from '../exec/types';
import { ParamError, readParams, optionalString } from './params';
import { defineState } from './shape';
import type { StateDeps, StateModule } from './types';

interface PkgParams {
  names: string[];
  version?: string;
  pm: PackageManager;
}

type Current = Array<{ name: string; state: PackageState }>;

function names(p: Record<string, unknown>): string[] {
  const v = p.name;
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.length > 0 && v.every((n) => typeof n === 'string')) return [...new Set(v as string[])];
  throw new ParamError('param "name" is required: a package name or a non-empty list of names');
}

export function createPkgInstalled(deps: StateDeps): StateModule {
  return defineState<PkgParams, Current>({
    name: 'core.pkg.installed',
    parse(raw) {
      const p = readParams(raw, ['name', 'version']);
      const list = names(p);
      const version = optionalString(p, 'version');
      if (version !== undefined && list.length > 1)
        throw new ParamError('param "version" applies to one package: give one name, or one step per pinned package');
      // Selecting the platform runs nothing; validation happens here, before read() runs a command.
      const pm = selectPackageManager(deps.facts, deps.runner, undefined, deps.installed);
      for (const n of list) pm.validate(n, version);
      return version === undefined ? { names: list, pm } : { names: list, version, pm };
    },
    read: async (p) => Promise.all(p.names.map(async (name) => ({ name, state: await p.pm.read(name, p.version) }))),
    diff(p, current) {
      const todo = current.filter((c) => !c.state.satisfied);
      if (todo.length === 0) return null;
      const one = (c: Current[number]) => {
        const to = p.version ?? c.state.candidate ?? 'latest';
        const from = c.state.installed ? (c.state.version ?? 'another version') : null;
        return { package: c.name, from, to };
      };
      if (p.names.length === 1) {
        const c = todo[0]!;
        const d = one(c);
        const summary = c.state.installed
          ? `change ${c.name} from ${d.from} to ${d.to} with ${p.pm.tool}`
          : `install ${c.name}${p.version ? ` ${p.version}` : ''} with ${p.pm.tool}`;
        return { summary, diff: d };
      }
      return {
        summary: `install ${todo.map((c) => c.name).join(' ')} with ${p.pm.tool}`,
        diff: { packages: todo.map(one) },
      };
    },
    describe: (p, current) =>
      current.length === 1
        ? `${p.names[0]}${current[0]!.state.version ? ` ${current[0]!.state.version}` : ''} is already installed`
        : `${p.names.join(' ')} are already installed`,
    apply(p, current) {
      const todo = current.filter((c) => !c.state.satisfied).map((c) => c.name);
      if (p.names.length === 1) return p.pm.install(todo[0]!, p.version);
      return p.pm.installAll(todo.map((name) => ({ name })));
    },
  });
}

export function createPkgRemoved(deps: StateDeps): StateModule {
  return defineState<PkgParams & { purge: boolean }, Current>({
    name: 'core.pkg.removed',
    parse(raw) {
      const p = readParams(raw, ['name', 'purge']);
      const list = names(p);
      if (p.purge !== undefined && typeof p.purge !== 'boolean')
        throw new ParamError('param "purge" must be true or false');
      const pm = selectPackageManager(deps.facts, deps.runner, undefined, deps.installed);
      for (const n of list) pm.validate(n);
      return { names: list, pm, purge: p.purge !== false };
    },
    read: async (p) => Promise.all(p.names.map(async (name) => ({ name, state: await p.pm.read(name) }))),
    diff(p, current) {
      const todo = current.filter((c) => c.state.installed);
      if (todo.length === 0) return null;
      return {
        summary: `${p.purge ? 'purge' : 'remove'} ${todo.map((c) => c.name).join(' ')} with ${p.pm.tool}`,
        diff: { removed: todo.map((c) => ({ package: c.name, from: c.state.version ?? null })), purge: p.purge },
      };
    },
    describe: (p) => `${p.names.join(' ')} ${p.names.length === 1 ? 'is' : 'are'} not installed`,
    apply: (p, current) =>
      p.pm.remove(
        current.filter((c) => c.state.installed).map((c) => c.name),
        p.purge,
      ),
  });
}
