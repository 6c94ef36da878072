// Red Hat family: rpm reads, dnf installs.
import { assertPackageRequest, type NameRules } from './package-name';
import { tail, type CommandRunner } from './runner';
import { osFamilyOf, type PackageManager, type PackagePlatform, type PackageState } from './types';

export const DNF_RULES: NameRules = {
  tool: 'dnf',
  // RPM names allow upper case and underscores (perl-Data-Dumper, python3_foo) but no spaces or /.
  name: /^[A-Za-z0-9][A-Za-z0-9_.+-]*$/,
  // [epoch:]version[-release]; rpm also allows ~ and ^ in versions.
  version: /^([0-9]+:)?[A-Za-z0-9][A-Za-z0-9_.+~^-]*$/,
};

const REDHAT_FAMILIES = ['redhat', 'rhel', 'fedora'];
const QUERY_FORMAT = '%{VERSION}-%{RELEASE}\n';

export function createDnf(runner: CommandRunner): PackageManager {
  const validate = (name: string, version?: string) => assertPackageRequest(name, version, DNF_RULES);
  // rpm and dnf both accept "name-version[-release]" and match it against what is installed,
  // so the version comparison is the package manager's, not a string compare of ours.
  const spec = (name: string, version?: string) => (version === undefined ? name : `${name}-${version}`);
  return {
    tool: 'dnf',
    validate,
    async read(name, version): Promise<PackageState> {
      validate(name, version);
      const wanted = await runner({
        file: 'rpm',
        args: ['-q', '--queryformat', QUERY_FORMAT, '--', spec(name, version)],
      });
      if (wanted.code === 0) return { installed: true, satisfied: true, version: wanted.stdout.split('\n')[0] ?? '' };
      if (version === undefined) return { installed: false, satisfied: false };
      // Wanted version missing: is another version installed? Only matters for the message.
      const any = await runner({ file: 'rpm', args: ['-q', '--queryformat', QUERY_FORMAT, '--', name] });
      if (any.code !== 0) return { installed: false, satisfied: false };
      return { installed: true, satisfied: false, version: any.stdout.split('\n')[0] ?? '' };
    },
    install(name, version) {
      return this.installAll([version === undefined ? { name } : { name, version }]);
    },
    async installAll(requests) {
      for (const q of requests) validate(q.name, q.version);
      const targets = requests.map((q) => spec(q.name, q.version));
      const r = await runner({ file: 'dnf', args: ['install', '-y', '--', ...targets] });
      if (r.code !== 0)
        throw new Error(`dnf install ${targets.join(' ')} failed (exit ${r.code}): ${tail(r.stderr || r.stdout)}`);
      return `installed ${targets.join(' ')} with dnf`;
    },
    async remove(names) {
      // rpm keeps no configuration of a removed package apart from .rpmsave copies: purge is remove.
      for (const n of names) validate(n);
      const r = await runner({ file: 'dnf', args: ['remove', '-y', '--', ...names] });
      if (r.code !== 0)
        throw new Error(`dnf remove ${names.join(' ')} failed (exit ${r.code}): ${tail(r.stderr || r.stdout)}`);
      return `removed ${names.join(' ')} with dnf`;
    },
  };
}

export const dnfPlatform: PackagePlatform = {
  tool: 'dnf',
  appliesTo: 'os.family "redhat" (or "rhel", "fedora")',
  // The soulprint reports the RHEL line as "rhel" and Fedora as "fedora"; both use dnf.
  matches: (facts) => REDHAT_FAMILIES.includes(osFamilyOf(facts) ?? ''),
  create: createDnf,
};
