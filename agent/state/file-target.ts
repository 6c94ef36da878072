// Where a file state may write, and what is there now.
//
// Rule: a file state refuses to follow a symlink out of place. The target path is canonicalised
// lexically (path.resolve) and then no component of it, parents or the file itself, may be a
// symlink. A symlink anywhere in the path could point the write at a file the step never named
// (/etc/app -> /etc/shadow), so the step fails instead; write to the link's real path.
import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { fileIdOf } from './content-identity';
import { ParamError } from './params';

export class UnsafePathError extends Error {
  override readonly name = 'UnsafePathError';
}

/** The absolute, normalised target; throws ParamError for relative paths, NUL bytes or "/". */
export function canonicalTarget(raw: string): string {
  if (raw.includes('\0')) throw new ParamError('param "path" contains a NUL byte');
  if (!path.isAbsolute(raw)) throw new ParamError(`param "path" must be absolute, got ${JSON.stringify(raw)}`);
  const resolved = path.resolve(raw);
  if (resolved === path.parse(resolved).root) throw new ParamError('param "path" names the root directory, not a file');
  return resolved;
}

/** The path's components from the root down: /a/b/c -> [/a, /a/b, /a/b/c]. */
export function components(absolute: string): string[] {
  const root = path.parse(absolute).root;
  const parts = absolute.slice(root.length).split(path.sep).filter(Boolean);
  return parts.map((_, i) => root + parts.slice(0, i + 1).join(path.sep));
}

async function lstatOrNull(p: string) {
  try {
    return await fs.lstat(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Checks every existing component with lstat: parents must be real directories, the target (if
 * present) a regular file, and none may be a symlink. Components below the first missing one do
 * not exist yet and are created later as real directories.
 */
export async function assertSafePath(target: string): Promise<void> {
  const all = components(target);
  for (const [i, p] of all.entries()) {
    const st = await lstatOrNull(p);
    if (st === null) return;
    const isTarget = i === all.length - 1;
    if (st.isSymbolicLink()) {
      throw new UnsafePathError(
        `${p} is a symlink; refusing to follow a symlink out of place (${isTarget ? 'target' : `parent of ${target}`})`,
      );
    }
    if (!isTarget && !st.isDirectory())
      throw new UnsafePathError(`${p} exists and is not a directory (parent of ${target})`);
    if (isTarget && !st.isFile()) throw new UnsafePathError(`${target} exists and is not a regular file`);
  }
}

export interface FileSnapshot {
  exists: boolean;
  content?: Buffer;
  /** Permission bits only (mode & 0o7777). */
  mode?: number;
  uid?: number;
  gid?: number;
  /** The inode's identity, "<device>:<inode>:<birth time ns>" (content-identity.ts). */
  fileId?: string;
}

/** What the target holds now. Opened with O_NOFOLLOW so a symlink swapped in after the check fails. */
export async function readTarget(target: string): Promise<FileSnapshot> {
  await assertSafePath(target);
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(target, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { exists: false };
    if (code === 'ELOOP')
      throw new UnsafePathError(`${target} is a symlink; refusing to follow a symlink out of place (target)`);
    throw err;
  }
  try {
    const st = await fh.stat({ bigint: true });
    if (!st.isFile()) throw new UnsafePathError(`${target} exists and is not a regular file`);
    const content = await fh.readFile();
    return {
      exists: true,
      content,
      mode: Number(st.mode & 0o7777n),
      uid: Number(st.uid),
      gid: Number(st.gid),
      fileId: fileIdOf(st),
    };
  } finally {
    await fh.close();
  }
}
