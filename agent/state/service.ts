// core.service.running / stopped { name, enabled? } and core.service.restarted / reloaded { name }.
// The state says what should be true; the init system running on the host (agent/exec/init-registry.ts)
// says how. Unit files are re-read first (systemd: daemon-reload) when the unit's file changed on disk
// or an earlier step of the same apply changed a file where unit files live, so a plan predicts the
// reload an apply will do even though, in a dry run, the earlier step wrote nothing.
// `daemon_reload: true` re-reads unit files before reading the unit in every real run (not in a dry
// run, which changes nothing), for a unit file something outside this apply changed; it is not a
// change by itself, as Ansible's systemd `daemon_reload`.
// restarted/reloaded act every time they run: a task uses them with `onchanges:` (soul-lint SL027),
// so the keeper sends them only when a watched step changed something.
import { selectInitSystem } from '../exec/init-registry';
import type { InitSystem, ServiceStatus } from '../exec/init-types';
import { ParamError, readParams, requireString } from './params';
import { afterInstall, decideAtApply, pendingInstall } from './pending';
import { defineState } from './shape';
import type { StateContext, StateDeps, StateModule } from './types';

type Kind = 'running' | 'stopped' | 'restarted' | 'reloaded';
type Action = 'daemon-reload' | 'start' | 'stop' | 'restart' | 'reload' | 'enable' | 'disable';

interface ServiceParams {
  name: string;
  enabled?: boolean;
  daemonReload?: boolean;
  init: InitSystem;
}
interface Current {
  status: ServiceStatus;
  unitsChanged: boolean;
  /** In a plan: the unit is not here, and an earlier step would install a package that may ship it. */
  byPackage?: boolean;
}

const PAST: Record<Action, string> = {
  'daemon-reload': 'reloaded unit files',
  start: 'started',
  stop: 'stopped',
  restart: 'restarted',
  reload: 'reloaded',
  enable: 'enabled',
  disable: 'disabled',
};

function phrase(a: Action, name: string, past: boolean): string {
  if (a === 'daemon-reload') return past ? 'reloaded unit files (daemon-reload)' : 'reload unit files (daemon-reload)';
  const at = a === 'enable' || a === 'disable' ? ' at boot' : '';
  return `${past ? PAST[a] : a} ${name}${at}`;
}

function plan(kind: Kind, p: ServiceParams, cur: Current): Action[] {
  const { status } = cur;
  const actions: Action[] = [];
  if (status.needsReload || cur.unitsChanged) actions.push('daemon-reload');
  // A unit whose file an earlier step of this apply creates does not exist yet in a dry run.
  const known = status.exists || cur.unitsChanged || cur.byPackage === true;
  if (!known && kind !== 'stopped') throw new Error(`no unit named ${p.name} on this host (${p.init.tool})`);
  if (!known) return [];
  if (kind === 'running' && !status.active) actions.push('start');
  if (kind === 'stopped' && status.active) actions.push('stop');
  if (kind === 'restarted') actions.push(status.active ? 'restart' : 'start');
  if (kind === 'reloaded') actions.push(status.active ? 'reload' : 'start');
  // A unit file an earlier step creates is not enabled yet; a static, masked or generated unit
  // (enabled undefined) cannot be enabled or disabled, so asking is no change rather than one every run.
  const enabled = status.exists ? status.enabled : false;
  if (p.enabled === true && enabled === false) actions.push('enable');
  if (p.enabled === false && enabled === true) actions.push('disable');
  return actions;
}

export function createServiceState(kind: Kind, deps: StateDeps): StateModule {
  const withEnabled = kind === 'running' || kind === 'stopped';
  return defineState<ServiceParams, Current>({
    name: `core.service.${kind}`,
    parse(raw) {
      const p = readParams(raw, withEnabled ? ['name', 'enabled', 'daemon_reload'] : ['name', 'daemon_reload']);
      const name = requireString(p, 'name');
      if (p.enabled !== undefined && typeof p.enabled !== 'boolean')
        throw new ParamError('param "enabled" must be true or false');
      if (p.daemon_reload !== undefined && typeof p.daemon_reload !== 'boolean')
        throw new ParamError('param "daemon_reload" must be true or false');
      const init = deps.init ?? selectInitSystem(deps.runner);
      init.validate(name);
      return {
        name,
        init,
        ...(typeof p.enabled === 'boolean' ? { enabled: p.enabled } : {}),
        ...(p.daemon_reload === true ? { daemonReload: true } : {}),
      };
    },
    async read(p, ctx: StateContext) {
      if (p.daemonReload && !ctx.dryRun) await p.init.rereadUnits();
      const status = await p.init.status(p.name);
      const unitsChanged = (ctx.earlier ?? []).some((e) => e.changed && e.paths.some((x) => p.init.isUnitPath(x)));
      const pkg = status.exists ? undefined : pendingInstall(ctx);
      // Whether the package's scripts start or enable it is seen at apply: the plan shows the actions
      // for a unit that is there stopped and disabled, and says so.
      if (pkg) decideAtApply(ctx, `unit ${p.name} is not on this host yet: ${afterInstall(pkg)}`);
      return { status, unitsChanged, ...(pkg ? { byPackage: true } : {}) };
    },
    diff(p, cur) {
      const actions = plan(kind, p, cur);
      if (actions.length === 0) return null;
      return {
        summary: actions.map((a) => phrase(a, p.name, false)).join(', '),
        diff: {
          service: p.name,
          actions,
          before: {
            active: cur.status.active,
            ...(cur.status.enabled === undefined ? {} : { enabled: cur.status.enabled }),
          },
        },
      };
    },
    describe: (p, { status }) =>
      status.exists
        ? `${p.name} is ${status.active ? 'running' : 'stopped'}${status.enabled === undefined ? '' : `, ${status.enabled ? 'enabled' : 'disabled'} at boot`}`
        : `${p.name} is not installed (no unit), so it is not running`,
    async apply(p, _cur, change) {
      const actions = (change.diff as { actions: Action[] }).actions;
      for (const a of actions) {
        if (a === 'daemon-reload') await p.init.rereadUnits();
        else if (a === 'enable' || a === 'disable') await p.init.enable(p.name, a === 'enable');
        else await p.init[a](p.name);
      }
      return actions.map((a) => phrase(a, p.name, true)).join(', ');
    },
  });
}

export const createServiceRunning = (deps: StateDeps) => createServiceState('running', deps);
export const createServiceStopped = (deps: StateDeps) => createServiceState('stopped', deps);
export const createServiceRestarted = (deps: StateDeps) => createServiceState('restarted', deps);
export const createServiceReloaded = (deps: StateDeps) => createServiceState('reloaded', deps);
