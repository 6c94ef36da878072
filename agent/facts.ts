// The soulprint: the host facts a soul reports on connect and whenever they change. Read from the
// `os` module and /etc/os-release; every source is injectable so tests do not depend on the machine.
import fs from 'node:fs';
import os from 'node:os';
import type { Soulprint } from '../proto/types';
import { VERSION as SOUL_VERSION } from '../common/version';

export interface FactSources {
  hostname(): string;
  osRelease(): string | undefined;
  kernelRelease(): string;
  machine(): string;
  cpuCount(): number;
  totalMemory(): number;
  interfaces(): NodeJS.Dict<os.NetworkInterfaceInfo[]>;
}

export const hostSources: FactSources = {
  hostname: () => os.hostname(),
  osRelease: () => {
    for (const f of ['/etc/os-release', '/usr/lib/os-release']) {
      try {
        return fs.readFileSync(f, 'utf8');
      } catch {
        /* try the next */
      }
    }
    return undefined;
  },
  kernelRelease: () => os.release(),
  machine: () => os.machine(),
  cpuCount: () => os.availableParallelism(),
  totalMemory: () => os.totalmem(),
  interfaces: () => os.networkInterfaces(),
};

export function parseOsRelease(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!.replace(/^(["'])(.*)\1$/, '$2');
  }
  return out;
}

const FAMILIES = ['debian', 'rhel', 'fedora', 'suse', 'alpine', 'arch'];

/** The distribution family: the release's own ID when it is a family, else the first family in ID_LIKE. */
export function osFamily(release: Record<string, string>): string {
  const ids = [release.ID ?? '', ...(release.ID_LIKE ?? '').split(/\s+/)].filter(Boolean);
  const family = ids.find((id) => FAMILIES.includes(id));
  if (family === 'fedora' && release.ID !== 'fedora') return 'rhel';
  return family ?? (ids[0] || os.platform());
}

export function collectSoulprint(fqdn: string, src: FactSources = hostSources): Soulprint {
  const release = parseOsRelease(src.osRelease() ?? '');
  const addresses = Object.values(src.interfaces())
    .flatMap((list) => (list ?? []).filter((a) => !a.internal).map((a) => a.address))
    .sort();
  return {
    fqdn,
    hostname: src.hostname(),
    os_family: osFamily(release),
    os_name: release.NAME ?? release.ID ?? os.type(),
    os_release: release.VERSION_ID ?? src.kernelRelease(),
    architecture: src.machine(),
    cpu_count: src.cpuCount(),
    memory_bytes: src.totalMemory(),
    addresses,
    soul_version: SOUL_VERSION,
  };
}

/** Facts compare as a whole; any difference is sent. */
export function sameSoulprint(a: Soulprint, b: Soulprint): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
