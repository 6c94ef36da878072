// Which execution module applies on this host, chosen by a predicate over the host's facts.
// Adding a platform: write agent/exec/<tool>.ts exporting a PackagePlatform, add one line below.
import { apkPlatform } from './apk';
import { aptPlatform } from './apt';
import { dnfPlatform } from './dnf';
import type { InstalledPackages } from './dpkg-status';
import type { CommandRunner } from './runner';
import { osFamilyOf, type HostFacts, type PackageManager, type PackagePlatform } from './types';

export const PACKAGE_PLATFORMS: readonly PackagePlatform[] = [aptPlatform, dnfPlatform, apkPlatform];

export class NoPlatformError extends Error {
  override readonly name = 'NoPlatformError';
}

/** The first platform whose predicate matches; throws NoPlatformError naming the known ones. */
export function selectPackageManager(
  facts: HostFacts,
  runner: CommandRunner,
  platforms: readonly PackagePlatform[] = PACKAGE_PLATFORMS,
  installed?: InstalledPackages,
): PackageManager {
  const platform = platforms.find((p) => p.matches(facts));
  if (!platform) {
    const reported = osFamilyOf(facts);
    const family = reported === undefined ? 'not reported' : JSON.stringify(reported);
    const known = platforms.map((p) => `${p.tool} (${p.appliesTo})`).join(', ');
    throw new NoPlatformError(`no package manager for this host: os.family is ${family}; supported: ${known}`);
  }
  return platform.create(runner, installed);
}
