// Alpine: apk reads and installs.
import { assertPackageRequest, type NameRules } from './package-name';
import { tail, type CommandRunner } from './runner';
import { osFamilyOf, type PackageManager, type PackagePlatform, type PackageState } from './types';

export const APK_RULES: NameRules = {
  tool: 'apk',
  name: /^[A-Za-z0-9][A-Za-z0-9_.+-]*$/,
  // e.g. 1.36.1-r2; the name rules exclude = < > ~ so "name=version" cannot be smuggled in a name.
  version: /^[0-9][A-Za-z0-9_.+-]*$/,
};

export function createApk(runner: CommandRunner): PackageManager {
  const validate = (name: string, version?: string) => assertPackageRequest(name, version, APK_RULES);
  // apk takes dependency constraints ("name=1.2-r0") both in `info -e` and `add`, so apk itself
  // decides whether the installed version satisfies the request. `info -e` answers by exit code;
  // its printed output varies between apk-tools 2 and 3, so it is not parsed.
  const spec = (name: string, version?: string) => (version === undefined ? name : `${name}=${version}`);
  return {
    tool: 'apk',
    validate,
    async read(name, version): Promise<PackageState> {
      validate(name, version);
      const wanted = await runner({ file: 'apk', args: ['info', '-e', '--', spec(name, version)] });
      if (wanted.code === 0) return { installed: true, satisfied: true };
      if (version === undefined) return { installed: false, satisfied: false };
      const any = await runner({ file: 'apk', args: ['info', '-e', '--', name] });
      return { installed: any.code === 0, satisfied: false };
    },
    install(name, version) {
      return this.installAll([version === undefined ? { name } : { name, version }]);
    },
    async installAll(requests) {
      for (const q of requests) validate(q.name, q.version);
      const targets = requests.map((q) => spec(q.name, q.version));
      // `apk add` only prompts on hosts that opted into interactive mode; no extra flag is passed
      // that older apk-tools would reject.
      const r = await runner({ file: 'apk', args: ['add', '--', ...targets] });
      if (r.code !== 0)
        throw new Error(`apk add ${targets.join(' ')} failed (exit ${r.code}): ${tail(r.stderr || r.stdout)}`);
      return `installed ${targets.join(' ')} with apk`;
    },
    async remove(names, purge) {
      for (const n of names) validate(n);
      const r = await runner({ file: 'apk', args: ['del', ...(purge ? ['--purge'] : []), '--', ...names] });
      if (r.code !== 0)
        throw new Error(`apk del ${names.join(' ')} failed (exit ${r.code}): ${tail(r.stderr || r.stdout)}`);
      return `${purge ? 'purged' : 'removed'} ${names.join(' ')} with apk`;
    },
  };
}

export const apkPlatform: PackagePlatform = {
  tool: 'apk',
  appliesTo: 'os.family "alpine"',
  matches: (facts) => osFamilyOf(facts) === 'alpine',
  create: createApk,
};
