// Debian family: the dpkg database (read in-process when the soul passes it, else dpkg-query)
// says what is installed, apt-get installs.
import { assertPackageRequest, type NameRules } from './package-name';
import type { InstalledPackages } from './dpkg-status';
import { tail, type CommandRunner } from './runner';
import { osFamilyOf, type PackageManager, type PackagePlatform, type PackageState } from './types';

/** Seconds apt-get waits for the dpkg lock held by another process before it gives up. */
export const LOCK_WAIT_S = 300;

export const APT_RULES: NameRules = {
  tool: 'apt',
  // Debian policy 5.6.1: lower case, digits, + - . ; at least two characters, starting alphanumeric.
  name: /^[a-z0-9][a-z0-9+.-]+$/,
  // Debian policy 5.6.12: [epoch:]upstream[-revision]; upstream starts with a digit.
  version: /^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$/,
};

// `${Status}` is e.g. "install ok installed"; a removed package keeps "deinstall ok config-files".
// One line per match: a multi-arch package can answer with several.
const SHOW_FORMAT = '${Status} ${Version}\n';

export function createApt(runner: CommandRunner, installed?: InstalledPackages): PackageManager {
  const validate = (name: string, version?: string) => assertPackageRequest(name, version, APT_RULES);
  return {
    tool: 'apt',
    validate,
    async read(name, version): Promise<PackageState> {
      validate(name, version);
      // What apt would install (`apt-cache policy`'s Candidate), so a plan names a version, not "latest".
      const withCandidate = async (state: PackageState): Promise<PackageState> => {
        if (version !== undefined) return state;
        const p = await runner({ file: 'apt-cache', args: ['policy', '--', name] });
        const m = p.code === 0 ? /^\s*Candidate:\s*(\S+)\s*$/m.exec(p.stdout) : null;
        return m && m[1] !== '(none)' ? { ...state, candidate: m[1] } : state;
      };
      const known = await installed?.lookup(name);
      if (known) {
        if (!known.installed) return withCandidate({ installed: false, satisfied: false });
        return {
          installed: true,
          version: known.version,
          satisfied: version === undefined || version === known.version,
        };
      }
      const r = await runner({ file: 'dpkg-query', args: ['-W', '-f', SHOW_FORMAT, '--', name] });
      // Exit 1 with "no packages found matching" is the normal "not installed" answer.
      if (r.code !== 0) {
        if (/no packages found/i.test(r.stderr) || r.code === 1)
          return withCandidate({ installed: false, satisfied: false });
        throw new Error(`dpkg-query failed (exit ${r.code}): ${tail(r.stderr)}`);
      }
      const line = r.stdout.split('\n').find((l) => /^\S+ ok installed /.test(l));
      if (!line) return withCandidate({ installed: false, satisfied: false });
      const installedVersion = line.split(' ')[3] ?? '';
      return {
        installed: true,
        version: installedVersion,
        satisfied: version === undefined || version === installedVersion,
      };
    },
    install(name, version) {
      return this.installAll([version === undefined ? { name } : { name, version }]);
    },
    async installAll(requests) {
      for (const r of requests) validate(r.name, r.version);
      const targets = requests.map((r) => (r.version === undefined ? r.name : `${r.name}=${r.version}`));
      const r = await runner({
        file: 'apt-get',
        args: [
          'install',
          '-y',
          '--no-install-recommends',
          '-o',
          'Dpkg::Options::=--force-confold',
          '-o',
          `DPkg::Lock::Timeout=${LOCK_WAIT_S}`,
          '--',
          ...targets,
        ],
        // No prompt can ever be answered on a managed host; confold keeps locally edited config files.
        // The dpkg lock is waited for, not failed on: unattended-upgrades, an operator's apt, or
        // another soul's step on the same machine may hold it for a while.
        env: { DEBIAN_FRONTEND: 'noninteractive' },
      });
      if (r.code !== 0)
        throw new Error(`apt-get install ${targets.join(' ')} failed (exit ${r.code}): ${tail(r.stderr || r.stdout)}`);
      return `installed ${targets.join(' ')} with apt-get`;
    },
    async remove(names, purge) {
      for (const n of names) validate(n);
      const verb = purge ? 'purge' : 'remove';
      const r = await runner({
        file: 'apt-get',
        args: [verb, '-y', '-o', `DPkg::Lock::Timeout=${LOCK_WAIT_S}`, '--', ...names],
        env: { DEBIAN_FRONTEND: 'noninteractive' },
      });
      if (r.code !== 0)
        throw new Error(`apt-get ${verb} ${names.join(' ')} failed (exit ${r.code}): ${tail(r.stderr || r.stdout)}`);
      return `${purge ? 'purged' : 'removed'} ${names.join(' ')} with apt-get`;
    },
  };
}

export const aptPlatform: PackagePlatform = {
  tool: 'apt',
  appliesTo: 'os.family "debian"',
  matches: (facts) => osFamilyOf(facts) === 'debian',
  create: createApt,
};
