// core.systemd.unit { name, content?, enabled?, state? }: a unit (or timer) file in /etc/systemd/system
// with exactly `content`, unit files re-read (daemon-reload) when it changed, then the unit enabled or
// disabled and started or stopped: Ansible's `template` + `systemd_service` in one step, so a timer is
// one step. The plan lists each action in the order the apply takes them and shows the file's diff.
// A running service whose file changed is not restarted (neither Ansible nor Salt does): a
// core.service.restarted step with `onchanges:` on this one says so explicitly.
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { selectInitSystem } from '../exec/init-registry';
import type { InitSystem, ServiceStatus } from '../exec/init-types';
import { ensureParents, writeAtomic } from './atomic-write';
import { readTarget, type FileSnapshot } from './file-target';
import { ParamError, optionalString, readParams, requireString } from './params';
import { defineState } from './shape';
import type { StateContext, StateDeps, StateModule } from './types';
import { MAX_DIFF_INPUT, isText, unifiedDiff } from './unified-diff';

/** Where this module writes unit files: the administrator's directory, before the packages' ones. */
export const UNIT_FILE_DIR = '/etc/systemd/system';
const NAME = /^[A-Za-z0-9_:@\\][A-Za-z0-9_.:@\\-]*\.(service|timer|socket|path|target|mount|automount|slice)$/;
const UNIT_FILE_MODE = 0o644;

type Action = 'write' | 'daemon-reload' | 'enable' | 'disable' | 'start' | 'stop';

interface UnitParams {
  name: string;
  file: string;
  content?: Buffer;
  enabled?: boolean;
  state?: 'started' | 'stopped';
  init: InitSystem;
}
interface Current {
  file: FileSnapshot;
  status: ServiceStatus;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function phrase(a: Action, p: UnitParams, fileExists: boolean, past: boolean): string {
  switch (a) {
    case 'write':
      return `${past ? (fileExists ? 'updated' : 'created') : fileExists ? 'update' : 'create'} ${p.file}`;
    case 'daemon-reload':
      return past ? 'reloaded unit files (daemon-reload)' : 'reload unit files (daemon-reload)';
    case 'enable':
    case 'disable':
      return `${past ? `${a}d` : a} ${p.name} at boot`;
    case 'start':
      return `${past ? 'started' : 'start'} ${p.name}`;
    case 'stop':
      return `${past ? 'stopped' : 'stop'} ${p.name}`;
  }
}

export function createSystemdUnitState(deps: StateDeps, unitDir = UNIT_FILE_DIR): StateModule {
  return defineState<UnitParams, Current>({
    name: 'core.systemd.unit',
    parse(raw) {
      const p = readParams(raw, ['name', 'content', 'enabled', 'state']);
      const name = requireString(p, 'name');
      if (!NAME.test(name) || name.length > 256)
        throw new ParamError(
          `param "name" must be a unit file name with its type, such as "backup.timer" or "app.service" (no path, no leading "-"), got ${JSON.stringify(name)}`,
        );
      const content = optionalString(p, 'content');
      if (content === '')
        throw new ParamError('param "content" must not be empty; leave it out to keep the unit file as it is');
      if (p.enabled !== undefined && typeof p.enabled !== 'boolean')
        throw new ParamError('param "enabled" must be true or false');
      const state = optionalString(p, 'state');
      if (state !== undefined && state !== 'started' && state !== 'stopped')
        throw new ParamError(`param "state" must be "started" or "stopped", got ${JSON.stringify(state)}`);
      // `systemctl enable` acts on the [Install] section; without one it warns and does nothing, so the
      // step would ask for the same change every run. Said here, before anything is written.
      if (p.enabled === true && content !== undefined && !/^\s*\[Install\]\s*$/m.test(content))
        throw new ParamError(
          `param "enabled": ${name} has no [Install] section, so it cannot be enabled at boot; add one (a timer: "[Install]\\nWantedBy=timers.target", a service: "[Install]\\nWantedBy=multi-user.target") or leave "enabled" out`,
        );
      const init = deps.init ?? selectInitSystem(deps.runner);
      if (init.tool !== 'systemd')
        throw new Error(
          `core.systemd.unit needs systemd as the init system; this host runs ${init.tool} (use core.service.*)`,
        );
      return {
        name,
        file: path.join(unitDir, name),
        init,
        ...(content === undefined ? {} : { content: Buffer.from(content, 'utf8') }),
        ...(typeof p.enabled === 'boolean' ? { enabled: p.enabled } : {}),
        ...(state === undefined ? {} : { state: state as 'started' | 'stopped' }),
      };
    },
    async read(p) {
      const file = await readTarget(p.file);
      const status = await p.init.status(p.name);
      return { file, status };
    },
    diff(p, { file, status }, ctx: StateContext) {
      const actions: Action[] = [];
      const writes = p.content !== undefined && !(file.content?.equals(p.content) ?? false);
      if (writes) actions.push('write');
      if (writes || status.needsReload) actions.push('daemon-reload');
      // A unit file this step creates is unknown to systemd until the reload: not enabled, not running.
      const known = status.exists || writes;
      if (!known) throw new Error(`no unit named ${p.name} on this host; give "content" to write its file`);
      const enabled = status.exists ? status.enabled : false;
      if (p.enabled === true && enabled === false) actions.push('enable');
      if (p.enabled === false && enabled === true) actions.push('disable');
      const active = status.exists && status.active;
      if (p.state === 'started' && !active) actions.push('start');
      if (p.state === 'stopped' && active) actions.push('stop');
      if (actions.length === 0) return null;
      const diff: Record<string, unknown> = {
        unit: p.name,
        actions,
        before: {
          exists: file.exists,
          active,
          ...(status.exists && status.enabled !== undefined ? { enabled: status.enabled } : {}),
        },
      };
      if (writes) {
        const after = p.content!;
        const before = file.content ?? Buffer.alloc(0);
        diff.content = {
          ...(file.exists ? { before: { sha256: sha256(before), size: before.length } } : {}),
          after: { sha256: sha256(after), size: after.length },
          // Content only in a plan the keeper allows it in (the step holds no secret), as core.file.present.
          ...(ctx.dryRun && ctx.showContent === true
            ? before.length > MAX_DIFF_INPUT || after.length > MAX_DIFF_INPUT
              ? { unified_withheld: `larger than ${MAX_DIFF_INPUT} bytes` }
              : isText(before) && isText(after)
                ? { unified: unifiedDiff(before.toString('utf8'), after.toString('utf8'), p.file) }
                : { unified_withheld: 'not text' }
            : {}),
        };
      }
      return { summary: actions.map((a) => phrase(a, p, file.exists, false)).join(', '), diff };
    },
    describe: (p, { status }) =>
      `${p.name} is as desired (${status.active ? 'running' : 'stopped'}${status.enabled === undefined ? '' : `, ${status.enabled ? 'enabled' : 'disabled'} at boot`})`,
    async apply(p, { file }, change) {
      const actions = (change.diff as { actions: Action[] }).actions;
      const done: string[] = [];
      try {
        for (const a of actions) {
          if (a === 'write') {
            await ensureParents(p.file);
            await writeAtomic({
              path: p.file,
              content: p.content!,
              mode: file.mode ?? UNIT_FILE_MODE,
              ...(file.uid === undefined ? {} : { uid: file.uid }),
              ...(file.gid === undefined ? {} : { gid: file.gid }),
            });
          } else if (a === 'daemon-reload') await p.init.rereadUnits();
          else if (a === 'enable' || a === 'disable') await p.init.enable(p.name, a === 'enable');
          else await p.init[a](p.name);
          done.push(phrase(a, p, file.exists, true));
        }
      } catch (err) {
        // A half-done step says what it did before the failure.
        const msg = err instanceof Error ? err.message : String(err);
        throw new Error(done.length === 0 ? msg : `${msg} (already done: ${done.join(', ')})`);
      }
      return done.join(', ');
    },
  });
}

export const createSystemdUnit = (deps: StateDeps): StateModule => createSystemdUnitState(deps);
