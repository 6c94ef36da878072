// The Debian package database, read from /var/lib/dpkg/status by the soul itself.
//
// `dpkg-query -W` parses the whole database (about 1 MB and 40 ms of CPU on a small host) to answer
// for one package, and a soul asked it once per package step of every run. dpkg records a change by
// writing a new status file and renaming it over the old one, so (device, inode, size, mtime) name
// the file's content: any install or removal, by a soul, an operator or unattended-upgrades, gives
// a new identity and the next lookup parses again. A package removed by hand between two runs is
// therefore noticed exactly as with dpkg-query. While dpkg is running (or was killed) its changes
// sit in the journal under updates/ before they reach the status file: then the answer is "cannot
// tell" and the caller asks dpkg-query, which reads the journal too.
import fs from 'node:fs';
import path from 'node:path';

export interface DpkgAnswer {
  installed: boolean;
  version?: string;
}

export interface InstalledPackages {
  /** The package's state, or undefined when the database cannot be read safely now (ask dpkg-query). */
  lookup(name: string): Promise<DpkgAnswer | undefined>;
}

export const DPKG_ADMIN_DIR = '/var/lib/dpkg';

function identity(st: fs.BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}`;
}

/**
 * The installed version of `name` in a status file, or undefined when no stanza of it says
 * `Status: <want> ok installed`. Found by searching the bytes for its `Package:` line and decoding
 * that stanza only: one lookup costs a byte search, not a decode and parse of the whole database.
 */
export function findInstalled(db: Buffer, name: string): string | undefined {
  const needle = Buffer.from(`Package: ${name}\n`);
  for (let at = db.indexOf(needle); at !== -1; at = db.indexOf(needle, at + needle.length)) {
    if (at !== 0 && db[at - 1] !== 0x0a) continue;
    const end = db.indexOf('\n\n', at);
    const stanza = db.toString('utf8', at, end === -1 ? db.length : end);
    const status = /^Status: (.*)$/m.exec(stanza)?.[1]?.trim().split(/\s+/);
    // A multi-arch package has a stanza per architecture; the first installed one answers, as the
    // first "ok installed" line of dpkg-query's output did.
    if (status?.[1] === 'ok' && status[2] === 'installed') return /^Version: (.*)$/m.exec(stanza)?.[1]?.trim() ?? '';
  }
  return undefined;
}

/** One read of the file's size (readFile reads in chunks, one thread-pool round trip each). */
async function readWhole(file: string, size: number): Promise<Buffer> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const { bytesRead } = await fh.read(buf, got, size - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await fh.close();
  }
}

export function dpkgStatusReader(adminDir = DPKG_ADMIN_DIR): InstalledPackages {
  const statusFile = path.join(adminDir, 'status');
  let cached: { id: string; db: Buffer } | undefined;

  async function journalPending(): Promise<boolean> {
    try {
      return (await fs.promises.readdir(path.join(adminDir, 'updates'))).length > 0;
    } catch (err) {
      // No updates/ folder at all: nothing pending. Anything else: cannot tell.
      return (err as NodeJS.ErrnoException).code !== 'ENOENT';
    }
  }

  async function load(): Promise<Buffer | undefined> {
    let before: fs.BigIntStats;
    try {
      before = await fs.promises.stat(statusFile, { bigint: true });
    } catch {
      return undefined;
    }
    if (await journalPending()) return undefined;
    const id = identity(before);
    if (cached?.id === id) return cached.db;
    let db: Buffer;
    try {
      db = await readWhole(statusFile, Number(before.size));
      // Replaced while it was read: this parse may mix two versions; let dpkg-query answer.
      if (identity(await fs.promises.stat(statusFile, { bigint: true })) !== id) return undefined;
    } catch {
      return undefined;
    }
    cached = { id, db };
    return db;
  }

  return {
    async lookup(name) {
      const db = await load();
      if (db === undefined) return undefined;
      const version = findInstalled(db, name);
      return version === undefined ? { installed: false } : { installed: true, version };
    },
  };
}
