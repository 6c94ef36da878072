// systemd through `systemctl` (argv, never a shell). State is read with `systemctl show`, which
// answers for any name (LoadState=not-found when no unit file exists) in one call.
import { existsSync } from 'node:fs';
import { tail, type CommandRunner } from './runner';
import type { InitPlatform, InitSystem, ServiceStatus } from './init-types';

const UNIT = /^[A-Za-z0-9_:@\\][A-Za-z0-9_.:@\\-]*$/;
const PROPS = 'LoadState,ActiveState,UnitFileState,NeedDaemonReload,MainPID';
/** Where systemd reads unit files (systemd.unit(5)); a managed file changed here needs daemon-reload. */
const UNIT_DIRS = [
  '/etc/systemd/system/',
  '/run/systemd/system/',
  '/lib/systemd/system/',
  '/usr/lib/systemd/system/',
  '/usr/local/lib/systemd/system/',
];

export function createSystemd(runner: CommandRunner): InitSystem {
  const validate = (name: string) => {
    if (!UNIT.test(name) || name.length > 256) throw new Error(`not a unit name: ${JSON.stringify(name)}`);
  };
  const systemctl = async (...args: string[]) => {
    const r = await runner({ file: 'systemctl', args, timeoutMs: 300_000 });
    if (r.code !== 0)
      throw new Error(`systemctl ${args.join(' ')} failed (exit ${r.code}): ${tail(r.stderr || r.stdout)}`);
    return r.stdout;
  };
  return {
    tool: 'systemd',
    validate,
    async status(name): Promise<ServiceStatus> {
      validate(name);
      const out = await systemctl('show', `--property=${PROPS}`, '--', name);
      const v = Object.fromEntries(
        out
          .split('\n')
          .filter((l) => l.includes('='))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      const file = v['UnitFileState'] ?? '';
      const pid = Number(v['MainPID'] ?? 0);
      return {
        exists: v['LoadState'] !== 'not-found',
        // "reloading" and "activating" are on their way to running: starting again is not needed.
        active: ['active', 'reloading', 'activating'].includes(v['ActiveState'] ?? ''),
        ...(file === 'enabled' || file === 'enabled-runtime'
          ? { enabled: true }
          : file === 'disabled'
            ? { enabled: false }
            : {}),
        needsReload: v['NeedDaemonReload'] === 'yes',
        ...(pid > 0 ? { mainPid: pid } : {}),
      };
    },
    start: async (name) => {
      validate(name);
      await systemctl('start', '--', name);
    },
    stop: async (name) => {
      validate(name);
      await systemctl('stop', '--', name);
    },
    restart: async (name) => {
      validate(name);
      await systemctl('restart', '--', name);
    },
    reload: async (name) => {
      validate(name);
      await systemctl('reload', '--', name);
    },
    enable: async (name, on) => {
      validate(name);
      await systemctl(on ? 'enable' : 'disable', '--', name);
    },
    rereadUnits: async () => {
      await systemctl('daemon-reload');
    },
    isUnitPath: (p) => UNIT_DIRS.some((d) => p.startsWith(d)),
  };
}

export const systemdPlatform: InitPlatform = {
  tool: 'systemd',
  detectedBy: '/run/systemd/system exists (systemd is PID 1)',
  // sd_booted(3): this directory exists only when systemd is the running init system.
  running: () => existsSync('/run/systemd/system'),
  create: createSystemd,
};
