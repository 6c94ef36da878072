// core.dir.present { path, mode?, owner?, group?, parents? }, core.link.present { path, target, force? },
// core.file.absent { path } and core.dir.absent { path }. As the file modules, they refuse a path
// with a symlink among its parents (file-target.ts): the link module's own `path` is the one place
// a symlink is expected. Removal refuses `/`, the system's top folders and the soul's own paths.
import { promises as fs, type Stats } from 'node:fs';
import * as path from 'node:path';
import { PROTECTED_FOLDERS } from '../../scenario/modules/protected-folders';
import { resolveOwnership } from './accounts';
import { formatMode, parseMode } from './file-state';
import { UnsafePathError, canonicalTarget, components } from './file-target';
import { ParamError, optionalString, readParams, requireString } from './params';
import { defineState } from './shape';
import type { StateDeps, StateModule } from './types';

const DEFAULT_DIR_MODE = 0o755;
const lstatOrNull = (p: string) =>
  fs.lstat(p).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? null : Promise.reject(e)));

/** The parents of `target` must be real directories, none a symlink; `target` itself is checked by the caller. */
async function assertSafeParents(target: string): Promise<void> {
  for (const c of components(target).slice(0, -1)) {
    const st = await lstatOrNull(c);
    if (st === null) return;
    if (st.isSymbolicLink())
      throw new UnsafePathError(`${c} is a symlink; refusing to follow a symlink out of place (parent of ${target})`);
    if (!st.isDirectory()) throw new UnsafePathError(`${c} exists and is not a directory (parent of ${target})`);
  }
}

function refuseRemoval(target: string, deps: StateDeps): void {
  if (PROTECTED_FOLDERS.has(target)) throw new ParamError(`refusing to remove ${target}: a system folder`);
  for (const own of deps.soulPaths ?? []) {
    const o = path.resolve(own);
    if (o === target || o.startsWith(`${target}/`) || target.startsWith(`${o}/`))
      throw new ParamError(`refusing to remove ${target}: it holds or is inside the soul's own ${o}`);
  }
}

function optionalBool(p: Record<string, unknown>, key: string): boolean | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new ParamError(`param "${key}" must be true or false`);
  return v;
}

export function createPathStates(deps: StateDeps) {
  interface DirParams {
    path: string;
    mode?: number;
    owner?: string;
    group?: string;
    parents: boolean;
  }
  interface DirCurrent {
    st: Stats | null;
    uid?: number;
    gid?: number;
    missingParents: string[];
  }
  const dirPresent = defineState<DirParams, DirCurrent>({
    name: 'core.dir.present',
    parse(raw) {
      const p = readParams(raw, ['path', 'mode', 'owner', 'group', 'parents']);
      const mode = optionalString(p, 'mode');
      const out: DirParams = {
        path: canonicalTarget(requireString(p, 'path')),
        parents: optionalBool(p, 'parents') ?? true,
      };
      if (mode !== undefined) out.mode = parseMode(mode);
      for (const k of ['owner', 'group'] as const) {
        const v = optionalString(p, k);
        if (v !== undefined) out[k] = v;
      }
      return out;
    },
    async read(p, ctx) {
      const all = components(p.path);
      const missingParents: string[] = [];
      for (const c of all.slice(0, -1)) {
        const st = await lstatOrNull(c);
        if (st === null) missingParents.push(c);
        else if (st.isSymbolicLink() || !st.isDirectory())
          throw new UnsafePathError(
            `${c} is ${st.isSymbolicLink() ? 'a symlink' : 'not a directory'} (parent of ${p.path})`,
          );
      }
      const st = await lstatOrNull(p.path);
      if (st && (st.isSymbolicLink() || !st.isDirectory()))
        throw new UnsafePathError(
          `${p.path} exists and is not a directory${st.isSymbolicLink() ? ' (a symlink)' : ''}`,
        );
      if (missingParents.length > 0 && !p.parents)
        throw new Error(`parent ${missingParents[0]} does not exist (parents: false)`);
      const cur: DirCurrent = { st, missingParents };
      // In a plan, an account an earlier step of the same plan would create does not exist yet: -1.
      const ids = await resolveOwnership(p, ctx, deps.accounts);
      if (ids.uid !== undefined) cur.uid = ids.uid;
      if (ids.gid !== undefined) cur.gid = ids.gid;
      return cur;
    },
    diff(p, cur) {
      const mode = p.mode ?? DEFAULT_DIR_MODE;
      if (!cur.st) {
        return {
          summary: `create directory ${p.path} (mode ${formatMode(mode)})${cur.missingParents.length ? ` and its parents ${cur.missingParents.join(', ')}` : ''}`,
          diff: {
            created: true,
            mode: formatMode(mode),
            ...(cur.missingParents.length ? { parents: cur.missingParents } : {}),
            ...(cur.uid === undefined ? {} : { owner: cur.uid }),
            ...(cur.gid === undefined ? {} : { group: cur.gid }),
          },
        };
      }
      const diff: Record<string, unknown> = {};
      const have = cur.st.mode & 0o7777;
      if (p.mode !== undefined && have !== p.mode) diff.mode = { from: formatMode(have), to: formatMode(p.mode) };
      if (cur.uid !== undefined && cur.st.uid !== cur.uid) diff.owner = { from: cur.st.uid, to: cur.uid };
      if (cur.gid !== undefined && cur.st.gid !== cur.gid) diff.group = { from: cur.st.gid, to: cur.gid };
      const keys = Object.keys(diff);
      return keys.length
        ? {
            summary: `update directory ${p.path} (${keys
              .map((k) => {
                const d = diff[k] as { from: unknown; to: unknown };
                return `${k} ${d.from}->${d.to}`;
              })
              .join(', ')})`,
            diff,
          }
        : null;
    },
    describe: (p, cur) => `directory ${p.path} is already as desired (mode ${formatMode(cur.st!.mode & 0o7777)})`,
    async apply(p, cur, change) {
      for (const parent of cur.missingParents)
        await fs.mkdir(parent, { mode: DEFAULT_DIR_MODE }).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'EEXIST') throw e;
        });
      if (!cur.st) await fs.mkdir(p.path, { mode: 0o700 });
      // chown before chmod (a chown clears set-id bits); mode set explicitly, the umask does not apply.
      if (cur.uid !== undefined || cur.gid !== undefined) await fs.lchown(p.path, cur.uid ?? -1, cur.gid ?? -1);
      if (!cur.st || p.mode !== undefined) await fs.chmod(p.path, p.mode ?? DEFAULT_DIR_MODE);
      return change.summary.replace(/^create /, 'created ').replace(/^update /, 'updated ');
    },
  });

  interface LinkParams {
    path: string;
    target: string;
    force: boolean;
  }
  interface LinkCurrent {
    st: Stats | null;
    points?: string;
  }
  const linkPresent = defineState<LinkParams, LinkCurrent>({
    name: 'core.link.present',
    parse(raw) {
      const p = readParams(raw, ['path', 'target', 'force']);
      const target = requireString(p, 'target');
      if (target === '' || target.includes('\0')) throw new ParamError('param "target" must be a non-empty path');
      return { path: canonicalTarget(requireString(p, 'path')), target, force: optionalBool(p, 'force') ?? false };
    },
    async read(p) {
      await assertSafeParents(p.path);
      const st = await lstatOrNull(p.path);
      if (st?.isSymbolicLink()) return { st, points: await fs.readlink(p.path) };
      if (st?.isDirectory())
        throw new UnsafePathError(
          `${p.path} is a directory; a link never replaces a directory (core.dir.absent first)`,
        );
      if (st && !p.force) throw new Error(`${p.path} exists and is not a symlink; set force: true to replace it`);
      return { st };
    },
    diff(p, cur) {
      if (cur.points === p.target) return null;
      if (cur.points !== undefined)
        return {
          summary: `point ${p.path} at ${p.target} (was ${cur.points})`,
          diff: { link: p.path, from: cur.points, to: p.target },
        };
      if (cur.st)
        return {
          summary: `replace the file ${p.path} with a link to ${p.target}`,
          diff: { link: p.path, replaced: 'file', to: p.target },
        };
      return { summary: `link ${p.path} to ${p.target}`, diff: { link: p.path, created: true, to: p.target } };
    },
    describe: (p) => `${p.path} already points at ${p.target}`,
    async apply(p, _cur, change) {
      // A new link under a temporary name renamed over the old one: the path is never missing.
      const tmp = path.join(path.dirname(p.path), `.${path.basename(p.path)}.keeper-${process.pid}`);
      await fs.rm(tmp, { force: true });
      await fs.symlink(p.target, tmp);
      await fs.rename(tmp, p.path);
      return change.summary
        .replace(/^point /, 'pointed ')
        .replace(/^replace /, 'replaced ')
        .replace(/^link /, 'linked ');
    },
  });

  const absent = (kind: 'file' | 'dir') =>
    defineState<{ path: string }, { st: Stats | null }>({
      name: `core.${kind}.absent`,
      parse(raw) {
        const target = canonicalTarget(requireString(readParams(raw, ['path']), 'path'));
        refuseRemoval(target, deps);
        return { path: target };
      },
      async read(p) {
        await assertSafeParents(p.path);
        const st = await lstatOrNull(p.path);
        if (st && kind === 'file' && st.isDirectory()) throw new Error(`${p.path} is a directory; use core.dir.absent`);
        if (st && kind === 'dir' && !st.isDirectory())
          throw new Error(
            `${p.path} is not a directory${st.isSymbolicLink() ? ' (a symlink; core.file.absent removes it)' : '; use core.file.absent'}`,
          );
        return { st };
      },
      diff(p, { st }) {
        if (!st) return null;
        const what = st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'directory' : 'file';
        return {
          summary: `remove ${what} ${p.path}${what === 'directory' ? ' and everything in it' : ''}`,
          diff: { removed: p.path, kind: what, ...(st.isFile() ? { size: st.size } : {}) },
        };
      },
      describe: (p) => `${p.path} does not exist`,
      async apply(p, _cur, change) {
        // rm of a directory does not follow symlinks inside it: it removes the links, not their targets.
        await fs.rm(p.path, { recursive: kind === 'dir', force: false });
        return change.summary.replace(/^remove /, 'removed ');
      },
    });

  return { dirPresent, linkPresent, fileAbsent: absent('file'), dirAbsent: absent('dir') };
}

export const createDirPresent = (deps: StateDeps): StateModule => createPathStates(deps).dirPresent;
export const createLinkPresent = (deps: StateDeps): StateModule => createPathStates(deps).linkPresent;
export const createFileAbsent = (deps: StateDeps): StateModule => createPathStates(deps).fileAbsent;
export const createDirAbsent = (deps: StateDeps): StateModule => createPathStates(deps).dirAbsent;
