// core.user.present / absent and core.group.present / absent: local accounts, read from the account
// files (/etc/passwd, /etc/group; injectable) and changed with the shadow tools (useradd, usermod,
// userdel, groupadd, groupmod, groupdel), argv only. Only what a step writes is compared and set:
// a user step without `shell` leaves the account's shell alone.
import { promises as fs } from 'node:fs';
import { tail } from '../exec/runner';
import { SYSTEM_ACCOUNT_FILES } from './accounts';
import { ParamError, optionalString, readParams, requireString } from './params';
import { defineState } from './shape';
import type { StateDeps, StateModule } from './types';

const NAME = /^[a-z_][a-z0-9_-]*\$?$/;

interface UserEntry {
  name: string;
  uid: number;
  gid: number;
  comment: string;
  home: string;
  shell: string;
}
interface GroupEntry {
  name: string;
  gid: number;
  members: string[];
}

async function lines(file: string): Promise<string[][]> {
  const text = await fs.readFile(file, 'utf8');
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.split(':'));
}

async function users(file: string): Promise<UserEntry[]> {
  return (await lines(file)).map((f) => ({
    name: f[0]!,
    uid: Number(f[2]),
    gid: Number(f[3]),
    comment: f[4] ?? '',
    home: f[5] ?? '',
    shell: f[6] ?? '',
  }));
}

async function groups(file: string): Promise<GroupEntry[]> {
  return (await lines(file)).map((f) => ({
    name: f[0]!,
    gid: Number(f[2]),
    members: (f[3] ?? '').split(',').filter(Boolean),
  }));
}

function name(p: Record<string, unknown>): string {
  const n = requireString(p, 'name');
  if (!NAME.test(n) || n.length > 32) throw new ParamError(`param "name" is not an account name: ${JSON.stringify(n)}`);
  return n;
}

function optionalId(p: Record<string, unknown>, key: string): number | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 4294967294)
    throw new ParamError(`param "${key}" must be a whole number from 0 to 4294967294`);
  return v;
}

function optionalBool(p: Record<string, unknown>, key: string): boolean | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new ParamError(`param "${key}" must be true or false`);
  return v;
}

export function createAccountsStates(deps: StateDeps) {
  const files = deps.accounts ?? SYSTEM_ACCOUNT_FILES;
  const tool = async (file: string, args: string[]) => {
    const r = await deps.runner({ file, args, timeoutMs: 120_000 });
    if (r.code !== 0)
      throw new Error(`${file} ${args.join(' ')} failed (exit ${r.code}): ${tail(r.stderr || r.stdout)}`);
  };

  interface UserParams {
    name: string;
    uid?: number;
    group?: string;
    groups?: string[];
    home?: string;
    shell?: string;
    comment?: string;
    system: boolean;
    createHome: boolean;
  }
  interface UserCurrent {
    user?: UserEntry;
    gid?: number;
    memberOf: string[];
  }

  const userPresent = defineState<UserParams, UserCurrent>({
    name: 'core.user.present',
    parse(raw) {
      const p = readParams(raw, [
        'name',
        'uid',
        'group',
        'groups',
        'home',
        'shell',
        'comment',
        'system',
        'create_home',
      ]);
      const out: UserParams = {
        name: name(p),
        system: optionalBool(p, 'system') ?? false,
        createHome: optionalBool(p, 'create_home') ?? true,
      };
      const uid = optionalId(p, 'uid');
      if (uid !== undefined) out.uid = uid;
      for (const k of ['group', 'home', 'shell', 'comment'] as const) {
        const v = optionalString(p, k);
        if (v !== undefined) out[k] = v;
      }
      if (p.groups !== undefined) {
        if (!Array.isArray(p.groups) || !p.groups.every((g) => typeof g === 'string' && NAME.test(g)))
          throw new ParamError('param "groups" must be a list of group names');
        out.groups = [...new Set(p.groups as string[])].sort();
      }
      return out;
    },
    async read(p, ctx) {
      const user = (await users(files.passwd)).find((u) => u.name === p.name);
      const all = await groups(files.group);
      const cur: UserCurrent = {
        memberOf: all
          .filter((g) => g.members.includes(p.name))
          .map((g) => g.name)
          .sort(),
      };
      if (user) cur.user = user;
      // In a plan, a group an earlier step of the same plan would create does not exist yet.
      const planned = (g: string) =>
        ctx.dryRun &&
        (ctx.earlier ?? []).some((e) => e.module === 'core.group.present' && e.changed && e.names.includes(g));
      const missing = (g: string) =>
        new Error(`group ${g} does not exist (add a core.group.present step before this one)`);
      if (p.group !== undefined) {
        const g = /^[0-9]+$/.test(p.group) ? Number(p.group) : all.find((x) => x.name === p.group)?.gid;
        if (g !== undefined) cur.gid = g;
        else if (!planned(p.group)) throw missing(p.group);
        else cur.gid = -1;
      }
      for (const g of p.groups ?? []) if (!all.some((x) => x.name === g) && !planned(g)) throw missing(g);
      return cur;
    },
    diff(p, cur) {
      if (!cur.user) {
        const diff: Record<string, unknown> = { user: p.name, created: true };
        for (const k of ['uid', 'group', 'groups', 'home', 'shell'] as const) if (p[k] !== undefined) diff[k] = p[k];
        if (p.system) diff.system = true;
        return {
          summary: `create ${p.system ? 'system ' : ''}user ${p.name}${p.uid === undefined ? '' : ` (uid ${p.uid})`}`,
          diff,
        };
      }
      const u = cur.user;
      const diff: Record<string, unknown> = {};
      if (p.uid !== undefined && u.uid !== p.uid) diff.uid = { from: u.uid, to: p.uid };
      if (cur.gid !== undefined && u.gid !== cur.gid)
        diff.gid = { from: u.gid, to: cur.gid === -1 ? p.group : cur.gid };
      if (p.home !== undefined && u.home !== p.home) diff.home = { from: u.home, to: p.home };
      if (p.shell !== undefined && u.shell !== p.shell) diff.shell = { from: u.shell, to: p.shell };
      if (p.comment !== undefined && u.comment !== p.comment) diff.comment = { from: u.comment, to: p.comment };
      if (p.groups !== undefined && p.groups.join(',') !== cur.memberOf.join(','))
        diff.groups = { from: cur.memberOf, to: p.groups };
      const keys = Object.keys(diff);
      if (keys.length === 0) return null;
      return { summary: `change user ${p.name} (${keys.join(', ')})`, diff: { user: p.name, ...diff } };
    },
    describe: (p, cur) => `user ${p.name} exists (uid ${cur.user!.uid})`,
    async apply(p, cur) {
      const args: string[] = [];
      if (p.uid !== undefined) args.push('--uid', String(p.uid));
      if (p.group !== undefined) args.push('--gid', p.group);
      if (p.groups !== undefined) args.push('--groups', p.groups.join(','));
      if (p.home !== undefined) args.push('--home', p.home);
      if (p.shell !== undefined) args.push('--shell', p.shell);
      if (p.comment !== undefined) args.push('--comment', p.comment);
      if (!cur.user) {
        // No group named like the user unless asked: a `group` given is the primary group.
        const create = [
          ...(p.system ? ['--system'] : []),
          ...(p.createHome ? ['--create-home'] : ['--no-create-home']),
          ...(p.group === undefined ? ['--user-group'] : []),
        ];
        await tool('useradd', [...create, ...args, '--', p.name]);
        return `created ${p.system ? 'system ' : ''}user ${p.name}`;
      }
      await tool('usermod', [...args, '--', p.name]);
      return `changed user ${p.name}`;
    },
  });

  const userAbsent = defineState<{ name: string; removeHome: boolean }, { user?: UserEntry }>({
    name: 'core.user.absent',
    parse(raw) {
      const p = readParams(raw, ['name', 'remove_home']);
      return { name: name(p), removeHome: optionalBool(p, 'remove_home') ?? false };
    },
    read: async (p) => {
      const user = (await users(files.passwd)).find((u) => u.name === p.name);
      return user ? { user } : {};
    },
    diff: (p, cur) =>
      cur.user
        ? {
            summary: `remove user ${p.name}${p.removeHome ? ` and its home ${cur.user.home}` : ''}`,
            diff: { user: p.name, removed: true, uid: cur.user.uid },
          }
        : null,
    describe: (p) => `user ${p.name} does not exist`,
    async apply(p) {
      await tool('userdel', [...(p.removeHome ? ['--remove'] : []), '--', p.name]);
      return `removed user ${p.name}`;
    },
  });

  const groupPresent = defineState<{ name: string; gid?: number; system: boolean }, { group?: GroupEntry }>({
    name: 'core.group.present',
    parse(raw) {
      const p = readParams(raw, ['name', 'gid', 'system']);
      const gid = optionalId(p, 'gid');
      return { name: name(p), system: optionalBool(p, 'system') ?? false, ...(gid === undefined ? {} : { gid }) };
    },
    read: async (p) => {
      const group = (await groups(files.group)).find((g) => g.name === p.name);
      return group ? { group } : {};
    },
    diff(p, cur) {
      if (!cur.group)
        return {
          summary: `create ${p.system ? 'system ' : ''}group ${p.name}${p.gid === undefined ? '' : ` (gid ${p.gid})`}`,
          diff: { group: p.name, created: true, ...(p.gid === undefined ? {} : { gid: p.gid }) },
        };
      if (p.gid !== undefined && cur.group.gid !== p.gid)
        return {
          summary: `change group ${p.name} gid ${cur.group.gid}->${p.gid}`,
          diff: { group: p.name, gid: { from: cur.group.gid, to: p.gid } },
        };
      return null;
    },
    describe: (p, cur) => `group ${p.name} exists (gid ${cur.group!.gid})`,
    async apply(p, cur) {
      const gid = p.gid === undefined ? [] : ['--gid', String(p.gid)];
      if (!cur.group) {
        await tool('groupadd', [...(p.system ? ['--system'] : []), ...gid, '--', p.name]);
        return `created group ${p.name}`;
      }
      await tool('groupmod', [...gid, '--', p.name]);
      return `changed group ${p.name} gid to ${p.gid}`;
    },
  });

  const groupAbsent = defineState<{ name: string }, { group?: GroupEntry }>({
    name: 'core.group.absent',
    parse: (raw) => ({ name: name(readParams(raw, ['name'])) }),
    read: async (p) => {
      const group = (await groups(files.group)).find((g) => g.name === p.name);
      return group ? { group } : {};
    },
    diff: (p, cur) =>
      cur.group
        ? { summary: `remove group ${p.name}`, diff: { group: p.name, removed: true, gid: cur.group.gid } }
        : null,
    describe: (p) => `group ${p.name} does not exist`,
    async apply(p) {
      await tool('groupdel', ['--', p.name]);
      return `removed group ${p.name}`;
    },
  });

  return { userPresent, userAbsent, groupPresent, groupAbsent };
}

export const createUserPresent = (deps: StateDeps): StateModule => createAccountsStates(deps).userPresent;
export const createUserAbsent = (deps: StateDeps): StateModule => createAccountsStates(deps).userAbsent;
export const createGroupPresent = (deps: StateDeps): StateModule => createAccountsStates(deps).groupPresent;
export const createGroupAbsent = (deps: StateDeps): StateModule => createAccountsStates(deps).groupAbsent;
