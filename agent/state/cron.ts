// core.cron.present { name, schedule, command, user?, env? } and core.cron.absent { name }: a cron
// job as the file /etc/cron.d/<name> (Ansible's cron with cron_file, Salt's cron.present for a
// cron.d file). The file holds a header naming the step, the `env` lines, and the one entry
// `<schedule> <user> <command>`; it is Keeper's whole (an edit there is replaced on the next run)
// and is kept root-owned 0644, since cron skips a cron.d file that is group- or world-writable.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { assertSafePath } from './file-target';
import { ParamError, optionalString, readParams, requireString } from './params';
import { defineState } from './shape';
import { defineTextEdit, type Edit } from './text-edit';
import type { StateDeps, StateModule } from './types';

export const CRON_DIR = '/etc/cron.d';
const NAME = /^[A-Za-z0-9_-]+$/;
const SCHEDULE =
  /^(@(reboot|yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9A-Za-z*/,-]+( [0-9A-Za-z*/,-]+){4})$/;
const USER = /^[a-z_][a-z0-9_.-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface CronPresent {
  path: string;
  name: string;
  schedule: string;
  command: string;
  user: string;
  env: Array<[string, string]>;
}

function cronPath(p: Record<string, unknown>): { name: string; path: string } {
  const name = requireString(p, 'name');
  if (!NAME.test(name))
    throw new ParamError(
      `param "name" must be letters, digits, - and _ only (cron skips a cron.d file with a dot in its name), got ${JSON.stringify(name)}`,
    );
  return { name, path: path.join(CRON_DIR, name) };
}

export function parseCronPresent(raw: unknown): CronPresent {
  const p = readParams(raw, ['name', 'schedule', 'command', 'user', 'env']);
  const schedule = requireString(p, 'schedule');
  if (!SCHEDULE.test(schedule))
    throw new ParamError(
      `param "schedule" must be five fields (minute hour day month weekday) separated by single spaces, or @hourly, @daily, @weekly, @monthly, @yearly or @reboot; got ${JSON.stringify(schedule)}`,
    );
  const command = requireString(p, 'command');
  if (command.trim() === '' || /[\n\r]/.test(command))
    throw new ParamError('param "command" must be one non-empty line');
  if (/(^|[^\\])%/.test(command))
    throw new ParamError(
      'param "command" holds an unescaped %, which cron turns into a newline; write \\% for a literal %',
    );
  const user = optionalString(p, 'user') ?? 'root';
  if (!USER.test(user)) throw new ParamError(`param "user" must be a user name, got ${JSON.stringify(user)}`);
  const env: Array<[string, string]> = [];
  if (p.env !== undefined && p.env !== null) {
    if (typeof p.env !== 'object' || Array.isArray(p.env))
      throw new ParamError('param "env" must be a map of names to values');
    for (const [k, v] of Object.entries(p.env as Record<string, unknown>)) {
      if (!ENV_NAME.test(k))
        throw new ParamError(`param "env" has the name ${JSON.stringify(k)}; a name is [A-Za-z_][A-Za-z0-9_]*`);
      if (typeof v !== 'string' || /[\n\r]/.test(v))
        throw new ParamError(`param "env": the value of ${k} must be a string of one line`);
      env.push([k, v]);
    }
  }
  return { ...cronPath(p), schedule, command, user, env };
}

/** The whole cron.d file for the job. */
export function cronFile(p: Omit<CronPresent, 'path'>): string {
  return [
    `# core.cron.present ${p.name}: written by Keeper; an edit here is replaced on its next run.`,
    ...p.env.map(([k, v]) => `${k}=${v}`),
    `${p.schedule} ${p.user} ${p.command}`,
    '',
  ].join('\n');
}

export const createCronPresent = (_deps: StateDeps): StateModule =>
  defineTextEdit<CronPresent>({
    name: 'core.cron.present',
    parse: parseCronPresent,
    missing: () => 'create',
    edit: (p, before): Edit | null => {
      const want = cronFile(p);
      if (before === want) return null;
      return { after: want, what: before === '' ? `job ${p.name}` : `job ${p.name} changed` };
    },
    describe: (p) => `cron job ${p.name} is as desired (${p.path})`,
    fixed: () => ({ mode: 0o644, uid: 0, gid: 0 }),
  });

export const createCronAbsent = (_deps: StateDeps): StateModule =>
  defineState<{ name: string; path: string }, { exists: boolean }>({
    name: 'core.cron.absent',
    parse: (raw) => cronPath(readParams(raw, ['name'])),
    async read(p) {
      await assertSafePath(p.path);
      return { exists: (await fs.lstat(p.path).catch(() => null)) !== null };
    },
    diff: (p, { exists }) =>
      exists ? { summary: `remove ${p.path} (cron job ${p.name})`, diff: { removed: p.path } } : null,
    describe: (p) => `no cron job ${p.name} (${p.path} does not exist)`,
    async apply(p, _current, change) {
      await fs.unlink(p.path);
      const dir = await fs.open(path.dirname(p.path), 'r');
      try {
        await dir.sync(); // the removal survives a crash
      } finally {
        await dir.close();
      }
      return change.summary.replace(/^remove /, 'removed ');
    },
  });
