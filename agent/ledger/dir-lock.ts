// One soul process owns its ledger directory. The exactly-once guarantee rests on a single writer:
// the in-process per-step mutex cannot see another process. So opening a ledger takes
// <dir>/.lock with O_EXCL and writes our pid; a second soul (or a second open in this process)
// gets a clear error instead of silently sharing the directory.
//
// A lock left by a crashed soul is recognised by its pid no longer running and is taken over.
// Limits, accepted for a host agent started by its service manager: a recycled pid makes a stale
// lock look live (remove the file by hand, the error names it), and two souls starting in the
// same instant after a crash could both take over a stale lock.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export const LOCK_FILE = '.lock';
/** A lock file still empty after this long was left by a crash between create and write. */
const EMPTY_LOCK_GRACE_MS = 10_000;

export class LedgerLockedError extends Error {
  override readonly name = 'LedgerLockedError';
}

export interface DirLock {
  readonly path: string;
  release(): Promise<void>;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

async function tryCreate(lockPath: string): Promise<boolean> {
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(lockPath, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    await fh.writeFile(`${process.pid}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  return true;
}

/** Why the existing lock still counts, or null when it is stale. */
async function holder(lockPath: string): Promise<string | null> {
  const [text, st] = await Promise.all([fs.readFile(lockPath, 'utf8'), fs.stat(lockPath)]).catch(
    () => [null, null] as const,
  );
  if (text === null || st === null) return null; // vanished meanwhile
  const pid = Number(text.trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) {
    return Date.now() - st.mtimeMs < EMPTY_LOCK_GRACE_MS ? 'a soul that is starting up' : null;
  }
  if (pid === process.pid) return `this process (pid ${pid}); open the ledger once and share it`;
  return isRunning(pid) ? `soul pid ${pid}` : null;
}

export async function acquireDirLock(dir: string): Promise<DirLock> {
  const lockPath = path.join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await tryCreate(lockPath)) {
      return {
        path: lockPath,
        release: async () => {
          await fs.unlink(lockPath).catch(() => undefined);
        },
      };
    }
    const by = await holder(lockPath);
    if (by !== null) {
      throw new LedgerLockedError(
        `ledger directory ${dir} is in use by ${by}; one soul process owns its ledger (lock file ${lockPath})`,
      );
    }
    await fs.unlink(lockPath).catch(() => undefined); // stale: its owner is gone
  }
  throw new LedgerLockedError(`could not take the ledger lock ${lockPath}: it keeps reappearing`);
}
