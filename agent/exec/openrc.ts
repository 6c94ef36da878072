// OpenRC (Alpine, Gentoo) through `rc-service` and `rc-update` (argv, never a shell). A service is an
// init script in /etc/init.d; "enabled" means it is in the default runlevel, as `rc-update add <name>`
// puts it. OpenRC does not track a service's main process for every script, so no mainPid is given.
import { existsSync } from 'node:fs';
import { tail, type CommandRunner } from './runner';
import type { InitPlatform, InitSystem, ServiceStatus } from './init-types';

// An init script's file name: no slash, no leading dot or dash (never an option or a path).
const SERVICE = /^[A-Za-z0-9_][A-Za-z0-9_.@+-]*$/;
const RUNLEVEL = 'default';

/**
 * `rc-service <name> status` answers by exit code (openrc-run: 0 started, 3 stopped, 4 stopping,
 * 8 starting, 16 inactive, 32 crashed) and prints ` * status: <word>`; the word wins when printed.
 */
export function parseOpenrcStatus(code: number | null, out: string): { active: boolean; word: string } {
  const word = /status:\s*(\w+)/.exec(out)?.[1] ?? '';
  const byCode: Record<number, string> = {
    0: 'started',
    3: 'stopped',
    4: 'stopping',
    8: 'starting',
    16: 'inactive',
    32: 'crashed',
  };
  const state = word || byCode[code ?? -1] || 'unknown';
  // "starting" is on its way to running: starting it again is not needed (as systemd's "activating").
  return { active: state === 'started' || state === 'starting', word: state };
}

/** `rc-update show <runlevel>` lines are `  <service> | <runlevels>`: the services listed there. */
export function parseRcUpdateShow(out: string): Set<string> {
  const names = new Set<string>();
  for (const line of out.split('\n')) {
    const m = /^\s*(\S+)\s*\|/.exec(line);
    if (m) names.add(m[1]!);
  }
  return names;
}

export function createOpenrc(runner: CommandRunner): InitSystem {
  const validate = (name: string) => {
    if (!SERVICE.test(name) || name.length > 256)
      throw new Error(`not an OpenRC service name: ${JSON.stringify(name)}`);
  };
  const run = async (file: string, args: string[]) => {
    const r = await runner({ file, args, timeoutMs: 300_000 });
    if (r.code !== 0)
      throw new Error(`${file} ${args.join(' ')} failed (exit ${r.code}): ${tail(r.stderr || r.stdout)}`);
    return r.stdout;
  };
  const rcService = (name: string, action: string) => run('rc-service', ['--', name, action]);
  return {
    tool: 'openrc',
    validate,
    async status(name): Promise<ServiceStatus> {
      validate(name);
      const exists = (await runner({ file: 'rc-service', args: ['--exists', '--', name] })).code === 0;
      if (!exists) return { exists: false, active: false, needsReload: false };
      const st = await runner({ file: 'rc-service', args: ['--', name, 'status'] });
      const enabled = parseRcUpdateShow(await run('rc-update', ['show', RUNLEVEL])).has(name);
      // OpenRC reads init scripts at each call: there is nothing like a stale unit to reload.
      return { exists, active: parseOpenrcStatus(st.code, st.stdout + st.stderr).active, enabled, needsReload: false };
    },
    start: async (name) => {
      validate(name);
      await rcService(name, 'start');
    },
    stop: async (name) => {
      validate(name);
      await rcService(name, 'stop');
    },
    restart: async (name) => {
      validate(name);
      await rcService(name, 'restart');
    },
    reload: async (name) => {
      validate(name);
      // The script's own reload (nginx: SIGHUP to the master); a script without one fails, named.
      await rcService(name, 'reload');
    },
    enable: async (name, on) => {
      validate(name);
      await run('rc-update', [on ? 'add' : 'del', '--', name, RUNLEVEL]);
    },
    rereadUnits: async () => {
      // The dependency cache (/run/openrc/deptree), rebuilt from the init scripts' depend().
      await run('rc-update', ['--update']);
    },
    isUnitPath: (p) => p.startsWith('/etc/init.d/'),
  };
}

export const openrcPlatform: InitPlatform = {
  tool: 'openrc',
  detectedBy: '/run/openrc/softlevel exists (OpenRC booted this host)',
  // Written by `openrc` when it enters a runlevel at boot; absent on a host OpenRC did not boot.
  running: () => existsSync('/run/openrc/softlevel'),
  create: createOpenrc,
};
