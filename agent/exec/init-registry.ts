// Which init system runs this host. Adding one: agent/exec/<tool>.ts exporting an InitPlatform,
// one line below.
import type { InitPlatform, InitSystem } from './init-types';
import type { CommandRunner } from './runner';
import { openrcPlatform } from './openrc';
import { systemdPlatform } from './systemd';

export const INIT_PLATFORMS: readonly InitPlatform[] = [systemdPlatform, openrcPlatform];

/** The running init system's driver; throws naming the known ones when none is recognised. */
export function selectInitSystem(
  runner: CommandRunner,
  platforms: readonly InitPlatform[] = INIT_PLATFORMS,
): InitSystem {
  const p = platforms.find((x) => x.running());
  if (!p)
    throw new Error(
      `no supported init system is running on this host; supported: ${platforms.map((x) => `${x.tool} (${x.detectedBy})`).join(', ')}`,
    );
  return p.create(runner);
}
