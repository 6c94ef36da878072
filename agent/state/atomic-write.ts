// Crash-safe replacement of a file: after a crash at any point the target holds either the whole
// old content or the whole new content, never a mix, and no temp file is left by a failed write.
// Sequence: temp file in the same directory (O_EXCL, random name, so nobody else's file is reused)
// -> write -> chown/chmod -> fsync -> rename over the target -> fsync the directory (makes the
// rename itself durable). With `validate`, the finished temp file is checked before the rename: a
// refusal removes it and leaves the live file exactly as it was.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { UnsafePathError, components } from './file-target';

export interface AtomicWrite {
  path: string;
  content: Buffer;
  mode: number;
  uid?: number;
  gid?: number;
  /** Checks the candidate (the complete temp file, final mode and owner) before it replaces the
   *  target; throws to refuse it. */
  validate?: (candidate: string) => Promise<void>;
}

/** Mode for parent directories we create: the conventional 0755, applied exactly (not via umask). */
export const PARENT_DIR_MODE = 0o755;

async function fsyncDir(dir: string): Promise<void> {
  const fh = await fs.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Creates the missing parents of `target` one component at a time, refusing symlinks and
 * non-directories on the way (each component is re-checked, so a link planted meanwhile is caught).
 * Returns the directories created.
 */
export async function ensureParents(target: string): Promise<string[]> {
  const created: string[] = [];
  for (const dir of components(path.dirname(target))) {
    let st = await fs.lstat(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (st === null) {
      try {
        await fs.mkdir(dir, { mode: PARENT_DIR_MODE });
        await fs.chmod(dir, PARENT_DIR_MODE);
        await fsyncDir(path.dirname(dir));
        created.push(dir);
        continue;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        st = await fs.lstat(dir); // someone else created it: check what it is
      }
    }
    if (st.isSymbolicLink())
      throw new UnsafePathError(`${dir} is a symlink; refusing to follow a symlink out of place (parent of ${target})`);
    if (!st.isDirectory()) throw new UnsafePathError(`${dir} exists and is not a directory (parent of ${target})`);
  }
  return created;
}

/** The temp name: hidden, in the target's directory (rename is only atomic within a filesystem). */
export function tempNameFor(target: string): string {
  const base = path.basename(target).slice(0, 100);
  return path.join(path.dirname(target), `.${base}.keeper-${randomBytes(8).toString('hex')}.tmp`);
}

export async function writeAtomic(spec: AtomicWrite): Promise<void> {
  const tmp = tempNameFor(spec.path);
  // 'wx' = O_CREAT|O_EXCL|O_WRONLY: fails rather than opening an existing file or a planted symlink.
  // 0600 until the final mode is set, so the content is never briefly readable by others.
  const fh = await fs.open(tmp, 'wx', 0o600);
  let renamed = false;
  try {
    await fh.writeFile(spec.content);
    if (spec.uid !== undefined || spec.gid !== undefined) await fh.chown(spec.uid ?? -1, spec.gid ?? -1);
    await fh.chmod(spec.mode); // after chown: chown clears setuid/setgid bits
    await fh.sync();
    await fh.close();
    if (spec.validate) await spec.validate(tmp);
    await fs.rename(tmp, spec.path);
    renamed = true;
    await fsyncDir(path.dirname(spec.path));
  } catch (err) {
    await fh.close().catch(() => undefined); // already closed on the late failure paths
    if (!renamed) await fs.unlink(tmp).catch(() => undefined);
    throw err;
  }
}
